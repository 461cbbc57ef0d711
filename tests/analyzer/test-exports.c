/* SPDX-License-Identifier: MIT */
/*
 * What the exports carry for other viewers: the Chrome export's CPU samples with their
 * stacks (the trace-event format's "samples" and "stackFrames"), checked against the
 * model and read back by speedscope's own importer; one CPU-time track per thread; C++
 * names demangled in every output.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "analyzer/model/profile.h"
#include "analyzer/model/stacks.h"
#include "helpers.h"

static const char threads_trace[] = "stacks/stacks-threads.json";

/* `inferscope-analyze ARGS` in the data folder; fails the test unless it exits 0. */
static char *analyze_out(const char *args)
{
	char cmd[4096], *out = NULL, *err = NULL;
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s", data_path(""), getenv("ISC_ANALYZE"),
		 args);
	int st = run(cmd, &out, &err);
	cr_assert_eq(st, 0, "%s: exit %d: %s", cmd, st, err ? err : "");
	free(err);
	return out;
}

static yajl_val chrome_export(const char *rel)
{
	char args[512];
	snprintf(args, sizeof(args), "-f chrome '%s'", rel);
	char *out = analyze_out(args), err[256];
	yajl_val d = yajl_tree_parse(out, err, sizeof(err));
	cr_assert_not_null(d, "%s", err);
	free(out);
	return d;
}

static yajl_val member(yajl_val o, const char *key, yajl_type type)
{
	const char *p[] = { key, NULL };
	return yajl_tree_get(o, p, type);
}

static const char *str_member(yajl_val o, const char *key)
{
	yajl_val v = member(o, key, yajl_t_string);
	return v != NULL ? YAJL_GET_STRING(v) : NULL;
}

/* Each sample's frames, leaf to root through "parent", are the model's stack of the sample
 * at the same time on the same thread, frame by frame, and the weights are its CPU time. */
Test(exports, chrome_samples_carry_their_stacks)
{
	struct isc_trace *t = load(threads_trace);
	yajl_val d = chrome_export(threads_trace);
	yajl_val samples = member(d, "samples", yajl_t_array),
		 frames = member(d, "stackFrames", yajl_t_object);
	cr_assert(samples != NULL && frames != NULL, "samples and stackFrames at the top");
	size_t k = 0, model_samples = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		struct isc_stack_ref st;
		if (e->type != ISC_T_CPU_SAMPLE || !isc_stack_of(t, e, &st) || st.n == 0) {
			continue;
		}
		model_samples++;
		cr_assert_lt(k, YAJL_GET_ARRAY(samples)->len);
		yajl_val s = YAJL_GET_ARRAY(samples)->values[k++];
		const char *tp[] = { "tid", NULL }, *wp[] = { "weight", NULL },
			   *ts[] = { "ts", NULL };
		cr_assert_eq(YAJL_GET_INTEGER(yajl_tree_get(s, tp, yajl_t_number)),
			     t->threads[e->thread].tid);
		cr_assert_float_eq(YAJL_GET_DOUBLE(yajl_tree_get(s, ts, yajl_t_number)),
				   (double)e->ts / 1000.0, 1e-3);
		cr_assert_float_eq(YAJL_GET_DOUBLE(yajl_tree_get(s, wp, yajl_t_number)),
				   (double)e->v.bytes / 1000.0, 1e-3);
		const char *id = str_member(s, "sf");
		for (size_t f = 0; f < st.n; f++) {
			cr_assert_not_null(id, "sample %zu: the stack ends after %zu frames of %zu",
					   k, f, st.n);
			yajl_val node = member(frames, id, yajl_t_object);
			cr_assert_not_null(node, "frame %s is in stackFrames", id);
			char want[512];
			isc_folded_frame(t, isc_stack_frame(&st, f), want, sizeof(want));
			cr_assert_str_eq(str_member(node, "name"), want, "sample %zu frame %zu", k,
					 f);
			id = str_member(node, "parent");
		}
		cr_assert_null(id, "sample %zu: no frame above the outermost", k);
	}
	cr_assert_gt(model_samples, 100);
	cr_assert_eq(YAJL_GET_ARRAY(samples)->len, model_samples);
	/* no zero-length stand-ins for them on the timeline */
	yajl_val ev = member(d, "traceEvents", yajl_t_array);
	for (size_t i = 0; i < YAJL_GET_ARRAY(ev)->len; i++) {
		const char *cat = str_member(YAJL_GET_ARRAY(ev)->values[i], "cat");
		cr_assert(cat == NULL || strcmp(cat, "instant") != 0, "event %zu is a sample", i);
	}
	yajl_tree_free(d);
	isc_trace_destroy(t);
}

/* Perfetto and chrome://tracing key a counter's track by process and name. */
Test(exports, chrome_cpu_time_is_one_track_per_thread)
{
	struct isc_trace *t = load(threads_trace);
	yajl_val d = chrome_export(threads_trace);
	yajl_val ev = member(d, "traceEvents", yajl_t_array);
	size_t threads = 0;
	for (size_t th = 0; th < t->n_threads; th++) {
		bool has = false;
		for (size_t i = 0; i < t->n && !has; i++) {
			has = t->ev[i].type == ISC_T_COUNTER && t->ev[i].thread == th &&
			      strcmp(isc_trace_str(t, t->ev[i].name), "cpu_time") == 0;
		}
		if (!has) {
			continue;
		}
		threads++;
		char want[64];
		snprintf(want, sizeof(want), "tid %lld", (long long)t->threads[th].tid);
		size_t n = 0;
		for (size_t i = 0; i < YAJL_GET_ARRAY(ev)->len; i++) {
			yajl_val e = YAJL_GET_ARRAY(ev)->values[i];
			const char *ph = str_member(e, "ph"), *name = str_member(e, "name");
			if (ph != NULL && strcmp(ph, "C") == 0 &&
			    strncmp(name, "cpu_time ", 9) == 0) {
				const char *end = name + strlen(name) - strlen(want);
				n += end >= name && strcmp(end, want) == 0;
			}
		}
		cr_assert_gt(n, 0, "a cpu_time track named for %s", want);
	}
	cr_assert_geq(threads, 3);
	yajl_tree_free(d);
	isc_trace_destroy(t);
}

/* speedscope (npm), installed by scripts/setup.sh test into the build folder. */
static char *speedscope_bundle(void)
{
	const char *dir = getenv("ISC_SPEEDSCOPE");
	char pattern[1024];
	snprintf(pattern, sizeof(pattern), "%s/dist/release/speedscope-*.js", dir ? dir : "");
	glob_t g;
	cr_assert(dir != NULL && glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1,
		  "speedscope is not installed at %s (scripts/setup.sh test installs it)", pattern);
	char *p = strdup(g.gl_pathv[0]);
	globfree(&g);
	return p;
}

/* speedscope's own importer opens the export: one profile per sampled thread, with the
 * frames the folded export has for that thread. */
Test(exports, speedscope_opens_the_chrome_samples)
{
	if (access("/usr/bin/node", X_OK) != 0) {
		cr_skip_test("/usr/bin/node is not installed: speedscope is not run");
	}
	char *bundle = speedscope_bundle();
	char tmp[] = "/tmp/isc-chrome-XXXXXX.json", args[2048];
	close(mkstemps(tmp, 5));
	snprintf(args, sizeof(args), "-f chrome -o '%s' '%s'", tmp, threads_trace);
	free(analyze_out(args));
	char cmd[4096], *out = NULL, *err = NULL;
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/node '%s/tests/analyzer/speedscope-import.js' '%s' '%s'",
		 getenv("ISC_SRC"), bundle, tmp);
	cr_assert_eq(run(cmd, &out, &err), 0, "%s", err ? err : "");
	unlink(tmp);
	char e[256];
	yajl_val d = yajl_tree_parse(out, e, sizeof(e));
	cr_assert(d != NULL && YAJL_IS_ARRAY(d), "%s: %s", e, out);
	/* the folded export: "pid 1000;NAME TID;outer;...;leaf US" */
	char *folded = analyze_out("-f folded stacks/stacks-threads.json");
	size_t sampled = 0;
	for (char *l = strtok(folded, "\n"); l != NULL; l = strtok(NULL, "\n")) {
		const char *semi = strchr(l, ';'), *sp = strchr(semi, ' ');
		char tid[32];
		snprintf(tid, sizeof(tid), "(tid %.*s)", (int)(strchr(sp, ';') - sp - 1), sp + 1);
		yajl_val prof = NULL;
		for (size_t i = 0; i < YAJL_GET_ARRAY(d)->len && prof == NULL; i++) {
			yajl_val p = YAJL_GET_ARRAY(d)->values[i];
			prof = strstr(str_member(p, "name"), tid) != NULL ? p : NULL;
		}
		cr_assert_not_null(prof, "speedscope has a profile for %s", tid);
		yajl_val fr = member(prof, "frames", yajl_t_array);
		const char *f = strchr(sp, ';') + 1, *end = strrchr(l, ' ');
		while (f < end) {
			const char *next = memchr(f, ';', (size_t)(end - f));
			next = next != NULL ? next : end;
			bool found = false;
			for (size_t i = 0; i < YAJL_GET_ARRAY(fr)->len && !found; i++) {
				const char *name = YAJL_GET_STRING(YAJL_GET_ARRAY(fr)->values[i]);
				found = strlen(name) == (size_t)(next - f) &&
					strncmp(name, f, (size_t)(next - f)) == 0;
			}
			cr_assert(found, "speedscope's %s has frame %.*s", tid, (int)(next - f), f);
			f = next + 1;
		}
		sampled++;
	}
	cr_assert_gt(sampled, 0);
	yajl_tree_free(d);
	free(folded);
	free(out);
	free(err);
	free(bundle);
}

/* A native frame named by its mangled symbol, as the preload's symboliser reads it from
 * the module's symbol table. */
Test(exports, cxx_names_are_demangled_in_every_output)
{
	static const char mangled[] = "_ZN2at6native5addmmERKNS_6TensorES3_";
	static const char demangled[] = "at::native::addmm(at::Tensor const&, at::Tensor const&)";
	char *src = slurp(data_path("stacks/stacks-cpu.json"), NULL);
	char tmp[] = "/tmp/isc-mangled-XXXXXX.json";
	FILE *f = fdopen(mkstemps(tmp, 5), "w");
	const char *at = strstr(src, "\"at::native::addmm\"");
	cr_assert_not_null(at);
	fprintf(f, "%.*s\"%s\"%s", (int)(at - src), src, mangled,
		at + strlen("\"at::native::addmm\""));
	fclose(f);
	static const char *const formats[] = { "md", "json", "html", "folded", "chrome" };
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char args[512];
		snprintf(args, sizeof(args), "-f %s '%s'", formats[i], tmp);
		char *out = analyze_out(args);
		cr_assert_null(strstr(out, mangled), "-f %s keeps the mangled name", formats[i]);
		/* HTML escapes the ampersands */
		const char *want = strcmp(formats[i], "html") == 0 ? "at::native::addmm(at::Tensor"
								   : demangled;
		cr_assert_not_null(strstr(out, want), "-f %s names %s", formats[i], want);
		free(out);
	}
	unlink(tmp);
	free(src);
}
