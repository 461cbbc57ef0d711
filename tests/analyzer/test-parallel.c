/* SPDX-License-Identifier: MIT */
/*
 * One trace read on several threads (readers/reader-inferscope-par.c) gives what the serial
 * reader gives, byte for byte: every trace of tests/analyzer/data through the command,
 * split into parts as small as an event, and models compared field by field on traces
 * made to trip a split (braces and commas inside strings, nested arrays of objects,
 * errors in a later part, what only the serial path reads). The analysis passes that run
 * on threads after the read (the verdict's what-ifs, base/par.c) are in the same
 * comparison: --threads 1 runs them in turn, more threads beside each other.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "analyzer/base/par.h"
#include "analyzer/base/sort.h"
#include "analyzer/base/string-table.h"
#include "analyzer/readers/reader.h"

/* The command's stdout, stderr and status for one trace, threads and split. */
struct outcome {
	int status;
	char *out, *err;
};

static struct outcome analyze_cli(const char *path, const char *args)
{
	const char *bin = getenv("ISC_ANALYZE");
	cr_assert_not_null(bin, "ISC_ANALYZE is not set (run through meson test)");
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "'%s' %s '%s'", bin, args, path);
	struct outcome o;
	o.status = run(cmd, &o.out, &o.err);
	return o;
}

static void same(const char *path, const char *fmt, const char *par)
{
	char a1[256], a2[256];
	snprintf(a1, sizeof(a1), "--threads 1 %s", fmt);
	snprintf(a2, sizeof(a2), "%s %s", par, fmt);
	struct outcome s = analyze_cli(path, a1), p = analyze_cli(path, a2);
	cr_expect_eq(s.status, p.status, "%s %s: status %d serially, %d with %s", path, fmt,
		     s.status, p.status, par);
	cr_expect_str_eq(s.out, p.out, "%s %s: the output differs with %s", path, fmt, par);
	cr_expect_str_eq(s.err, p.err, "%s %s: the messages differ with %s", path, fmt, par);
	free(s.out);
	free(s.err);
	free(p.out);
	free(p.err);
}

static size_t walk(const char *dir, char paths[][1024], size_t n, size_t cap)
{
	DIR *d = opendir(dir);
	cr_assert_not_null(d, "%s", dir);
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < cap) {
		if (e->d_name[0] == '.') {
			continue;
		}
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		struct stat st;
		cr_assert_eq(stat(p, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			n = walk(p, paths, n, cap);
		} else if (strstr(e->d_name, ".json") != NULL ||
			   strstr(e->d_name, ".bin") != NULL) {
			snprintf(paths[n++], 1024, "%s", p);
		}
	}
	closedir(d);
	return n;
}

/* Every trace of the suites' data (InferScope, Kineto, bare, fuzz seeds, invalid ones):
 * JSON (every figure the analysis has) and --validate alike with 4 or 3 threads and parts
 * of one event or of 300 bytes as with the serial reader; markdown on every fourth trace,
 * since it is written from the same analysis as the JSON. About 450 runs of the command:
 * 35 s of CPU, minutes of wall time on a loaded 2-core machine. */
Test(parallel, every_data_trace_as_serial, .timeout = 900)
{
	static char paths[400][1024];
	size_t n = walk(data_path(""), paths, 0, 400);
	cr_assert_gt(n, 50, "the data directory holds the suites' traces");
	for (size_t i = 0; i < n; i++) {
		same(paths[i], "-f json", "--threads 4 --parse-split 1");
		same(paths[i], "--validate", "--threads 3 --parse-split 300");
		if (i % 4 == 0) {
			same(paths[i], "-f md", "--threads 3 --parse-split 300");
		}
	}
}

/* Reads text with threads and split; the model, or NULL with *d set. */
static struct isc_trace *read_with(const char *text, unsigned threads, size_t split,
				   struct isc_diag *d)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_read_opts o = { .threads = threads, .split = split };
	if (isc_read_buffer(t, "mem.json", text, strlen(text), &o, d) < 0) {
		isc_trace_destroy(t);
		return NULL;
	}
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

static void same_model(const struct isc_trace *a, const struct isc_trace *b)
{
	cr_assert_eq(a->n, b->n);
	cr_assert_eq(memcmp(a->ev, b->ev, a->n * sizeof(*a->ev)), 0, "the events differ");
	cr_assert_eq(a->str->n, b->str->n);
	for (size_t i = 0; i < a->str->n; i++) {
		cr_assert_str_eq(isc_strtab_get(a->str, (uint32_t)i),
				 isc_strtab_get(b->str, (uint32_t)i));
	}
	cr_assert_eq(a->n_threads, b->n_threads);
	for (size_t i = 0; i < a->n_threads; i++) {
		cr_assert_eq(a->threads[i].tid, b->threads[i].tid);
	}
	cr_assert_eq(a->inputs[0].events, b->inputs[0].events);
	cr_assert_eq(a->inputs[0].skipped, b->inputs[0].skipped);
}

/* A trace of n events whose names hold what a split looks for, and kernels of several
 * shapes; `extra` is spliced into event `at` (-1: nowhere). */
static char *make_trace(int n, int at, const char *extra)
{
	size_t cap = (size_t)n * 400 + 4096, len = 0;
	char *s = malloc(cap);
	len += (size_t)snprintf(s + len, cap - len,
				"{\"format_version\":\"1.0\",\"trace_metadata\":{\"pid\":7,"
				"\"hostname\":\"h\"},\"events\":[\n");
	for (int i = 0; i < n; i++) {
		const char *names[] = { "plain", "a},\\n{\\\"b\\\":1}", "x},{y", "\\u00e9},  {z" };
		if (i % 5 == 4) {
			len += (size_t)snprintf(
				s + len, cap - len,
				"{\"id\":%d,\"type\":\"gpu_kernel\",\"name\":\"k%d\",\"timestamp_"
				"start_us\":%d,"
				"\"duration_us\":2,\"metadata\":{\"correlation_id\":%d,"
				"\"thread_id\":100,\"device_id\":0,\"stream_id\":7,\"grid_dim\":[%"
				"d,1,1],"
				"\"block_dim\":[256,1,1]}}",
				i, i % 3, 10 * i, i, 1 + i % 7);
		} else {
			len += (size_t)snprintf(s + len, cap - len,
						"{\"id\":%d,\"type\":\"cpu_call\",\"name\":\"%s%"
						"d\",\"timestamp_start_us\":%d,"
						"\"duration_us\":3,\"metadata\":{\"thread_id\":%d,"
						"\"extra\":[{\"a\":1},{\"b\":[{}, {}]}]%s}}",
						i, names[i % 4], i % 11, 10 * i, 100 + i % 13,
						i == at ? extra : "");
		}
		len += (size_t)snprintf(s + len, cap - len, i + 1 < n ? ",\n" : "\n");
	}
	snprintf(s + len, cap - len, "]}\n");
	return s;
}

/* A trace on one line: splits guessed inside strings and nested arrays, caught by the
 * check of the part before them, and read serially from there. */
Test(parallel, one_line_trace_as_serial)
{
	char *text = make_trace(400, -1, "");
	for (char *p = text; *p != '\0'; p++) {
		*p = *p == '\n' ? ' ' : *p;
	}
	struct isc_diag d = { "" };
	struct isc_trace *serial = read_with(text, 1, 0, &d);
	cr_assert_not_null(serial, "%s", d.msg);
	for (size_t split = 1; split < 20000; split = split * 3 + 1) {
		struct isc_trace *par = read_with(text, 4, split, &d);
		cr_assert_not_null(par, "%s", d.msg);
		same_model(serial, par);
		isc_trace_destroy(par);
	}
	isc_trace_destroy(serial);
	free(text);
}

Test(parallel, model_as_serial_at_every_split)
{
	char *text = make_trace(400, -1, "");
	struct isc_diag d = { "" };
	struct isc_trace *serial = read_with(text, 1, 0, &d);
	cr_assert_not_null(serial, "%s", d.msg);
	cr_assert_eq(serial->n, 400);
	size_t splits[] = { 1, 7, 64, 200, 333, 1000, 5000 };
	for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		uint64_t before = isc_read_parts_merged();
		struct isc_trace *par = read_with(text, 4, splits[i], &d);
		cr_assert_not_null(par, "%s", d.msg);
		/* the parts were read and merged, not the whole read serially */
		cr_assert_gt(isc_read_parts_merged() - before, 1, "split %zu", splits[i]);
		same_model(serial, par);
		isc_trace_destroy(par);
	}
	isc_trace_destroy(serial);
	free(text);
}

/* An invalid event late in the trace: the same message, event index and byte, whichever
 * part it falls in. */
Test(parallel, error_in_a_later_part_as_serial)
{
	char *text = make_trace(300, 250, ",\"call_depth\":\"deep\"");
	struct isc_diag ds = { "" }, dp = { "" };
	cr_assert_null(read_with(text, 1, 0, &ds));
	cr_assert(strstr(ds.msg, "event 250") != NULL, "%s", ds.msg);
	cr_assert_null(read_with(text, 4, 100, &dp));
	cr_assert_str_eq(ds.msg, dp.msg);
	free(text);
}

/* Legacy stack strings are numbered in the order of the whole trace: the part that holds
 * one is read serially from there on, with the same result. */
Test(parallel, serial_only_content_as_serial)
{
	char *text = make_trace(300, 150, ",\"stack\":[\"f\",\"g\"]");
	struct isc_diag d = { "" };
	struct isc_trace *serial = read_with(text, 1, 0, &d);
	cr_assert_not_null(serial, "%s", d.msg);
	uint64_t before = isc_read_parts_merged();
	struct isc_trace *par = read_with(text, 4, 500, &d);
	cr_assert_not_null(par, "%s", d.msg);
	cr_assert_gt(isc_read_parts_merged() - before, 1, "the parts before it merged");
	same_model(serial, par);
	isc_trace_destroy(par);
	isc_trace_destroy(serial);
	free(text);
}

/* A trace cut inside its events, and one with a comma before the events' ']'. */
Test(parallel, truncated_and_trailing_comma_as_serial)
{
	char *text = make_trace(200, -1, "");
	char *cut = strdup(text);
	cut[strlen(cut) * 2 / 3] = '\0';
	char *comma = strdup(text);
	char *end = strstr(comma, "\n]}");
	cr_assert_not_null(end);
	memcpy(end, ",]}", 3);
	const char *cases[] = { cut, comma };
	for (size_t i = 0; i < 2; i++) {
		struct isc_diag ds = { "" }, dp = { "" };
		cr_assert_null(read_with(cases[i], 1, 0, &ds));
		cr_assert_null(read_with(cases[i], 4, 150, &dp));
		cr_assert_str_eq(ds.msg, dp.msg);
	}
	free(cut);
	free(comma);
	free(text);
}

/* The radix sort's passes on several threads order a million keys or more as one thread
 * does: ties (few distinct keys, so digits repeat across the slices) in their first order. */
Test(parallel, sort_on_threads_as_serial)
{
	size_t n = (1u << 20) + 12345;
	struct item {
		int64_t key;
		int64_t pad;
	} *v = malloc(n * sizeof(*v));
	uint32_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i].key = (int64_t)(x % 5000) * 1000003 - 7; /* ties, three 16-bit passes */
		a[i] = b[i] = (uint32_t)(n - 1 - i);
	}
	isc_par_set_threads(1);
	cr_assert_eq(isc_sort_by_key(&v[0].key, sizeof(*v), a, n), 0);
	isc_par_set_threads(3);
	cr_assert_eq(isc_sort_by_key(&v[0].key, sizeof(*v), b, n), 0);
	isc_par_set_threads(0);
	for (size_t i = 1; i < n; i++) {
		cr_assert_leq(v[a[i - 1]].key, v[a[i]].key);
		if (v[a[i - 1]].key == v[a[i]].key) {
			cr_assert_gt(a[i - 1], a[i],
				     "ties keep their first order (descending here)");
		}
	}
	cr_assert_eq(memcmp(a, b, n * sizeof(*a)), 0, "the same order on three threads");
	free(v);
	free(a);
	free(b);
}

struct par_seen {
	unsigned ran[1000];
	unsigned worker_max;
};

static void par_job(void *arg, size_t i, unsigned worker)
{
	struct par_seen *s = arg;
	__atomic_add_fetch(&s->ran[i], 1, __ATOMIC_RELAXED);
	unsigned w = worker;
	__atomic_fetch_or(&s->worker_max, 1u << (w < 31 ? w : 31), __ATOMIC_RELAXED);
}

/* The analysis passes' pool (base/par.c): every job once, on no more workers than asked
 * and than --threads allows; with one thread, all on the caller's (worker 0). */
Test(parallel, pool_runs_every_job_once)
{
	unsigned caps[] = { 1, 2, 3 };
	for (size_t c = 0; c < 3; c++) {
		isc_par_set_threads(caps[c]);
		struct par_seen *s = calloc(1, sizeof(*s));
		unsigned used = isc_par_run(1000, 2, par_job, s);
		cr_assert_leq(used, caps[c] < 2 ? caps[c] : 2);
		cr_assert_geq(used, 1);
		for (size_t i = 0; i < 1000; i++) {
			cr_assert_eq(s->ran[i], 1, "job %zu ran %u times", i, s->ran[i]);
		}
		cr_assert_eq(s->worker_max & ~((1u << used) - 1), 0, "a worker id past %u", used);
		if (caps[c] == 1) {
			cr_assert_eq(s->worker_max, 1u, "one thread: the caller's only");
		}
		free(s);
	}
	isc_par_set_threads(0);
	struct par_seen none = { { 0 }, 0 };
	cr_assert_geq(isc_par_run(0, 2, par_job, &none), 1);
	cr_assert_eq(none.worker_max, 0u, "no job, nothing run");
}
