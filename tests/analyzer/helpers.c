/* SPDX-License-Identifier: MIT */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "analyzer/causal/graph.h"
#include "analyzer/readers/reader.h"
#include "analyzer/report/report.h"

const char *data_path(const char *rel)
{
	static char buf[4096];
	const char *d = getenv("ISC_DATA");
	cr_assert_not_null(d, "ISC_DATA is not set (run through meson test)");
	snprintf(buf, sizeof(buf), "%s/%s", d, rel);
	return buf;
}

char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		return NULL;
	}
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	size_t k;
	while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	fclose(f);
	buf[n] = '\0';
	if (len != NULL) {
		*len = n;
	}
	return buf;
}

int run(const char *cmd, char **out, char **err)
{
	char eo[] = "/tmp/isc-test-out-XXXXXX", ee[] = "/tmp/isc-test-err-XXXXXX";
	int fo = mkstemp(eo), fe = mkstemp(ee);
	cr_assert(fo >= 0 && fe >= 0);
	close(fo);
	close(fe);
	char *full = malloc(strlen(cmd) + 200);
	sprintf(full, "%s >%s 2>%s", cmd, eo, ee);
	int st = system(full);
	free(full);
	char *o = slurp(eo, NULL), *e = slurp(ee, NULL);
	unlink(eo);
	unlink(ee);
	if (out != NULL) {
		*out = o;
	} else {
		free(o);
	}
	if (err != NULL) {
		*err = e;
	} else {
		free(e);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

struct isc_trace *load(const char *rel)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_not_null(t);
	int r = isc_read_file(t, data_path(rel), NULL, &d);
	cr_assert_eq(r, 0, "reading %s: %s", rel, d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

struct isc_analysis *analyse(const struct isc_trace *t, const struct isc_analyze_opts *o)
{
	struct isc_analysis *a = NULL;
	struct isc_diag d = { "" };
	int r = isc_analyze(t, o, &a, &d);
	cr_assert_eq(r, 0, "analysis failed: %s", d.msg);
	/* Every analysis a test runs holds the result's invariants (analysis.h). */
	char msg[640];
	cr_assert(isc_analysis_check(a, msg, sizeof(msg)), "%s", msg);
	return a;
}

uint8_t *pprof_bytes(const struct isc_trace *t, const struct isc_analysis *a, size_t *n)
{
	char path[] = "/tmp/isc-pprof-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	struct isc_report_opts o = { .top = 10, .version = "test" };
	cr_assert_eq(isc_writer_find("pprof")->write(f, t, a, &o), 0);
	fclose(f);
	gzFile g = gzopen(path, "rb");
	cr_assert_not_null(g);
	size_t cap = 8 << 20;
	uint8_t *buf = malloc(cap);
	int r = gzread(g, buf, (unsigned)cap);
	gzclose(g);
	unlink(path);
	cr_assert(r > 0 && (size_t)r < cap, "the profile: %d bytes", r);
	*n = (size_t)r;
	return buf;
}

size_t count_events(const struct isc_trace *t, unsigned type)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++) {
		n += t->ev[i].type == type;
	}
	return n;
}

char *render(const struct isc_trace *t, const struct isc_analysis *a, const char *writer,
	     size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	cr_assert_not_null(f);
	struct isc_report_opts o = { .top = 10, .version = "test" };
	cr_assert_eq(isc_writer_find(writer)->write(f, t, a, &o), 0, "writer %s", writer);
	fclose(f);
	if (len != NULL) {
		*len = n;
	}
	return buf;
}

const char *node_name(const struct isc_trace *t, const struct isc_causal *c, uint32_t i)
{
	return isc_trace_str(t, t->ev[c->node[i].ev].name);
}

int64_t path_ns(const struct isc_causal *c, const struct isc_trace *t, const char *name)
{
	for (int i = 0; i < ISC_CP_TOP; i++) {
		if (c->top[i].ns > 0 && strcmp(isc_trace_str(t, c->top[i].name), name) == 0) {
			return c->top[i].ns;
		}
	}
	return 0;
}

int event_syncs_waiting_for(const struct isc_trace *t, const struct isc_causal *c, const char *op)
{
	int n = 0;
	for (uint32_t i = 0; i < c->host_nodes; i++) {
		const struct isc_gnode *g = &c->node[i];
		if ((g->flags & ISC_GN_WAIT) &&
		    isc_api_event_call(node_name(t, c, i)) == ISC_EC_SYNC) {
			cr_assert_str_eq(node_name(t, c, g->dep), op);
			n++;
		}
	}
	return n;
}
