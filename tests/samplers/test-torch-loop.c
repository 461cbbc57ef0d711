/* SPDX-License-Identifier: MIT */
/*
 * The PyTorch CPU loop of issue 12, under the preload with CPU sampling on (the
 * default): a pure-Python tokenize() in DataLoader workers (forked processes, each
 * writing trace.<pid>.json) and a small transformer encoder's forward in the main
 * thread (workloads/torch_loop.py).
 *
 * - The workers' traces name tokenize() in their own samples (a fork child reads its
 *   own memory, not its parent's), the main thread's name the encoder's forward with
 *   the native operator below it.
 * - The analyzer finds the workers, names tokenize() as their hottest function, and
 *   does not advise DataLoader workers to a program that has them.
 * - The same program with num_workers=0 is advised workers, naming tokenize(): the
 *   model's own forward is not preprocessing.
 *
 * Needs an interpreter with torch (Debian's python3-torch for /usr/bin/python3);
 * skipped with a message where none imports it.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "isc-test.h"

TestSuite(torch_loop, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 600);

/* The first of the configured interpreter and Debian's that imports torch. */
static const char *torch_python(void)
{
	static const char *const candidates[] = { ISC_PYTHON3, "/usr/bin/python3" };
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "'%s' -c 'import torch' >/dev/null 2>&1", candidates[i]);
		if (system(cmd) == 0) {
			return candidates[i];
		}
	}
	return NULL;
}

static size_t len_of(yajl_val a)
{
	return a && YAJL_IS_ARRAY(a) ? YAJL_GET_ARRAY(a)->len : 0;
}

static yajl_val at(yajl_val a, size_t i)
{
	return YAJL_GET_ARRAY(a)->values[i];
}

struct hits {
	size_t samples, tokenize, forward, native_op;
};

/* Samples of a trace whose stacks hold tokenize() of torch_loop.py, a forward() of
 * torch/nn/modules, and a native ATen operator (at::native, mangled or not). */
static struct hits count(yajl_val t)
{
	struct hits h = { 0, 0, 0, 0 };
	yajl_val frames = isc_trace_get(t, "stacks/frames");
	yajl_val stacks = isc_trace_get(t, "stacks/stacks");
	yajl_val ev = isc_trace_events(t);
	for (size_t i = 0; i < len_of(ev); i++) {
		yajl_val e = at(ev, i);
		const char *type = isc_trace_str(e, "type");
		if (type == NULL || strcmp(type, "cpu_sample") != 0) {
			continue;
		}
		h.samples++;
		long long sid = isc_trace_int(e, "stack_id", 0);
		if (sid < 1 || (size_t)sid > len_of(stacks)) {
			continue;
		}
		yajl_val fr = isc_trace_get(at(stacks, (size_t)sid - 1), "frames");
		bool tok = false, fwd = false, op = false;
		for (size_t k = 0; k < len_of(fr); k++) {
			long long id = YAJL_GET_INTEGER(at(fr, k));
			if (id < 1 || (size_t)id > len_of(frames)) {
				continue;
			}
			yajl_val f = at(frames, (size_t)id - 1);
			const char *fn = isc_trace_str(f, "function");
			const char *file = isc_trace_str(f, "file");
			const char *kind = isc_trace_str(f, "kind");
			bool py = kind != NULL && strcmp(kind, "python") == 0;
			fn = fn != NULL ? fn : "";
			tok |= py && strcmp(fn, "tokenize") == 0 && file &&
			       strstr(file, "torch_loop.py");
			fwd |= py && strcmp(fn, "forward") == 0 && file &&
			       strstr(file, "torch/nn/modules/");
			op |= !py && (strstr(fn, "at::native::") || strstr(fn, "2at6native"));
		}
		h.tokenize += tok;
		h.forward += fwd;
		h.native_op += op;
	}
	return h;
}

/* Runs torch_loop.py with this many workers in dir, under the preload; returns the
 * number of child traces (trace.<pid>.json) it left. */
static size_t run_loop(const char *py, const char *workers, const char *dir)
{
	char script[4096];
	snprintf(script, sizeof(script), "%s/torch_loop.py", ISC_WORKLOAD_DIR);
	const char *argv[] = { py, script, workers, "16", NULL };
	struct isc_run r;
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(isc_test_run(argv, NULL, true, dir, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "exit %d: %s %s", r.status,
		  r.out, r.err);
	cr_assert(strstr(r.out, "batches 16 workers"), "%s", r.out);
	isc_run_free(&r);
	char pat[4200];
	snprintf(pat, sizeof(pat), "%s/trace.*.json", dir);
	glob_t g;
	size_t n = glob(pat, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
	if (n > 0) {
		globfree(&g);
	}
	return n;
}

/* inferscope-analyze -f json over every trace in dir: the parsed result. */
static yajl_val analyse(const char *dir)
{
	char cmd[16384];
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' -f json -o result.json trace*.json", dir,
		 ISC_ANALYZE_PATH);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	char path[4200];
	snprintf(path, sizeof(path), "%s/result.json", dir);
	yajl_val res = isc_test_load_json(path);
	cr_assert_not_null(res);
	return res;
}

static yajl_val suggestion(yajl_val res, const char *rule)
{
	yajl_val s = isc_trace_get(res, "suggestions");
	for (size_t i = 0; i < len_of(s); i++) {
		const char *id = isc_trace_str(at(s, i), "rule_id");
		if (id && strcmp(id, rule) == 0) {
			return at(s, i);
		}
	}
	return NULL;
}

Test(torch_loop, workers_tokenize_main_thread_runs_the_encoder)
{
	const char *py = torch_python();
	if (py == NULL) {
		cr_skip_test("no interpreter imports torch (apt-get install python3-torch): "
			     "the PyTorch CPU loop is not checked");
	}
	const char *dir = isc_test_in_dir("w2");
	size_t children = run_loop(py, "2", dir);
	cr_assert_geq(children, 2, "each DataLoader worker writes its trace");

	/* Each worker's own samples name tokenize(); none names the encoder's forward,
	 * which only the parent runs. */
	char pat[4200];
	snprintf(pat, sizeof(pat), "%s/trace.*.json", dir);
	glob_t g;
	cr_assert_eq(glob(pat, 0, NULL, &g), 0);
	size_t tokenizing = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		yajl_val t = isc_test_load_json(g.gl_pathv[i]);
		cr_assert_not_null(t);
		struct hits h = count(t);
		cr_log_info("%s: %zu samples, %zu in tokenize", g.gl_pathv[i], h.samples,
			    h.tokenize);
		tokenizing += h.tokenize > 0;
		cr_assert_eq(h.forward, 0, "%s: a worker's samples name the parent's forward",
			     g.gl_pathv[i]);
		yajl_tree_free(t);
	}
	globfree(&g);
	cr_assert_geq(tokenizing, 2, "tokenize() in the workers' samples");

	/* The main thread: the encoder's forward with an ATen operator below it. */
	char main_trace[4200];
	snprintf(main_trace, sizeof(main_trace), "%s/trace.json", dir);
	yajl_val t = isc_test_load_json(main_trace);
	cr_assert_not_null(t);
	struct hits h = count(t);
	cr_assert_str_eq(isc_trace_str(t, "trace_metadata/sampling/python"), "ok");
	cr_assert_gt(h.forward, 0, "forward() of torch/nn/modules in the main process");
	cr_assert_gt(h.native_op, 0, "an at::native operator in the main process");
	cr_assert_eq(h.tokenize, 0, "the main process does not tokenize");
	long long main_pid = isc_trace_int(t, "trace_metadata/pid", 0);
	yajl_tree_free(t);

	yajl_val res = analyse(dir);
	cr_assert_geq(isc_trace_int(res, "cpu_profile/worker_processes", 0), 2);
	yajl_val threads = isc_trace_get(res, "cpu_profile/threads");
	size_t workers = 0;
	for (size_t i = 0; i < len_of(threads); i++) {
		yajl_val th = at(threads, i);
		long long pid = isc_trace_int(th, "pid", 0);
		bool worker = YAJL_IS_TRUE(isc_trace_get(th, "worker"));
		const char *hot = isc_trace_str(th, "hottest_function");
		if (pid == main_pid) {
			cr_assert(!worker, "the main process is no worker");
			if (isc_trace_int(th, "thread_id", 0) == pid) {
				cr_assert(hot && strcmp(hot, "tokenize") != 0, "main thread: %s",
					  hot ? hot : "(none)");
			}
		} else if (worker) {
			workers++;
			cr_assert_str_eq(hot, "tokenize", "worker pid %lld", pid);
		}
	}
	cr_assert_geq(workers, 2);
	yajl_val s = isc_trace_get(res, "suggestions");
	for (size_t i = 0; i < len_of(s); i++) {
		const char *action = isc_trace_str(at(s, i), "action");
		cr_assert(action && strstr(action, "num_workers") == NULL,
			  "workers advised to a program that has them: %s", action);
	}
	yajl_tree_free(res);
}

Test(torch_loop, without_workers_the_advice_names_tokenize)
{
	const char *py = torch_python();
	if (py == NULL) {
		cr_skip_test("no interpreter imports torch (apt-get install python3-torch): "
			     "the PyTorch CPU loop is not checked");
	}
	const char *dir = isc_test_in_dir("w0");
	cr_assert_eq(run_loop(py, "0", dir), 0, "no worker, no child trace");
	yajl_val res = analyse(dir);
	cr_assert_eq(isc_trace_int(res, "cpu_profile/worker_processes", -1), 0);
	yajl_val s = suggestion(res, "host.cpu-preprocessing");
	cr_assert_not_null(s, "host.cpu-preprocessing fires on the tokenizing main thread");
	const char *action = isc_trace_str(s, "action");
	const char *where = isc_trace_str(s, "where");
	cr_assert(action && strstr(action, "num_workers"), "%s", action);
	cr_assert(action && strstr(action, "tokenize()"), "names tokenize: %s", action);
	cr_assert(where && strstr(where, "tokenize() ") && strstr(where, "torch_loop.py:"), "%s",
		  where ? where : "(no where)");
	cr_assert(strstr(action, "forward") == NULL, "the model is not preprocessing: %s", action);
	yajl_tree_free(res);
}
