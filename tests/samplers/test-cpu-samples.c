/* SPDX-License-Identifier: MIT */
/*
 * CPU sampling (preload/samplers/): known hot functions in a 6:3:1 split of CPU time
 * - C, C++, Python on every CPython found, a C extension, threads - get their shares
 * within 5 percentage points, computed from the cpu_sample weights of the trace; the
 * program's own SIGPROF/SIGALRM keep working; no blocking call sees EINTR.
 *
 * Shares are taken among the three hot functions (start-up and exit are not theirs).
 * The runs ask for 1000 Hz, but the kernel checks CPU timers at its tick (250 Hz here),
 * and only on a tick where the thread is running: a sample every 4 ms of CPU time on an
 * idle machine, every 10 ms on a loaded one where threads run between ticks (the
 * overrun in its weight), so a 2 s run (HOT_MS) gives 200-500 samples. The workloads
 * interleave the functions in slices of random length and order, so each sample lands
 * in hot_six with probability 0.6 whatever the tick: a share estimated from n samples
 * has a binomial error of sqrt(p(1-p)/n), 2.8 pp for 0.6 at n = 300. The bound is the
 * issue's 5 pp, widened to four standard errors where the sample count cannot support
 * 5 pp (a false failure about once in 15000 checks); a misattribution (a function's
 * frames lost, a phase-locked sampler) is off by more than that.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "isc-test.h"

TestSuite(cpu_samples, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 300);

static const char *const rate[] = { "INFERSCOPE_CPU_SAMPLE=1000", NULL };

/* CPU time of the hot workloads, in ms: on a loaded machine, at least twice the 100
 * samples assert_split needs (1.2 s gave 97-160 there). */
#define HOT_MS "2000"

static yajl_val run_traced(const char *const argv[], const char *const env[])
{
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s exited %d: %s %s", argv[0],
		  r.status, r.out, r.err);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "no trace from %s (stderr: %s)", argv[0], r.err);
	isc_run_free(&r);
	return t;
}

static size_t len_of(yajl_val a)
{
	return a && YAJL_IS_ARRAY(a) ? YAJL_GET_ARRAY(a)->len : 0;
}

static yajl_val at(yajl_val a, size_t i)
{
	return YAJL_GET_ARRAY(a)->values[i];
}

/* Function name of frame id (ids are dense from 1). */
static const char *frame_fn(yajl_val frames, long long id)
{
	if (id < 1 || (size_t)id > len_of(frames)) {
		return NULL;
	}
	yajl_val f = at(frames, (size_t)id - 1);
	cr_assert_eq(isc_trace_int(f, "id", -1), id, "frame ids are dense from 1");
	return isc_trace_str(f, "function");
}

/*
 * Weight of each of the three names (the innermost frame whose function contains one
 * of them counts), as shares in percent of their sum. Returns the samples seen; *hits
 * the samples in one of the three.
 */
static size_t shares(yajl_val t, const char *const names[3], double pct[3], size_t *hits)
{
	yajl_val frames = isc_trace_get(t, "stacks/frames");
	yajl_val stacks = isc_trace_get(t, "stacks/stacks");
	yajl_val ev = isc_trace_events(t);
	double w[3] = { 0, 0, 0 };
	size_t n = 0;
	cr_assert(len_of(frames) > 0 && len_of(stacks) > 0, "the trace has no stacks table");
	for (size_t i = 0; i < len_of(ev); i++) {
		yajl_val e = at(ev, i);
		const char *type = isc_trace_str(e, "type");
		if (type == NULL || strcmp(type, "cpu_sample") != 0) {
			continue;
		}
		n++;
		long long sid = isc_trace_int(e, "stack_id", 0);
		double weight = isc_trace_num(e, "weight_us", -1);
		cr_assert_gt(weight, 0);
		cr_assert(isc_trace_int(e, "thread_id", 0) > 0 && isc_trace_int(e, "pid", 0) > 0);
		if (sid < 1 || (size_t)sid > len_of(stacks)) {
			continue;
		}
		yajl_val fr = isc_trace_get(at(stacks, (size_t)sid - 1), "frames");
		for (size_t k = 0; k < len_of(fr); k++) {
			const char *fn = frame_fn(frames, (long long)YAJL_GET_INTEGER(at(fr, k)));
			int hit = -1;
			for (int m = 0; fn && m < 3 && hit < 0; m++) {
				hit = strstr(fn, names[m]) ? m : -1;
			}
			if (hit >= 0) {
				w[hit] += weight;
				(*hits)++;
				break;
			}
		}
	}
	double sum = w[0] + w[1] + w[2];
	cr_assert_gt(sum, 0, "no sample in any of %s, %s, %s", names[0], names[1], names[2]);
	for (int m = 0; m < 3; m++) {
		pct[m] = 100.0 * w[m] / sum;
	}
	return n;
}

/*
 * One thread's CPU time as its cpu_time counter saw it, and its samples, in two
 * accountings: from the thread's start to its last reading (all its samples up to then),
 * and between its first and last readings (the samples in between).
 */
struct thread_cpu {
	long long tid;
	double first_ts, first_us, last_ts, last_us; /* counter readings */
	double weight_us[2];			     /* [0] from the start, [1] in the span */
	unsigned samples[2];
};

static struct thread_cpu *thread_of(struct thread_cpu *v, size_t *n, size_t cap, long long tid)
{
	for (size_t i = 0; i < *n; i++) {
		if (v[i].tid == tid) {
			return &v[i];
		}
	}
	cr_assert_lt(*n, cap, "more threads than the test expects");
	v[*n] = (struct thread_cpu){ .tid = tid, .first_ts = -1 };
	return &v[(*n)++];
}

/*
 * Every thread with enough CPU time (20 samples' worth, a sample counted as at least 10 ms:
 * the kernel checks CPU timers at its tick, 4 ms here) has, in one of the two accountings,
 * sample weights within 10 % of its CPU time, in at least min_samples of the samples that
 * CPU time is worth: the weight spread over samples rather than carried by a few heavy
 * ones, as a timer that fires late gives one sample for tens of milliseconds. (Only where
 * blocking calls take the samples: a thread that spins on a loaded machine is seldom
 * running at a tick and gets few samples, each weighing what it computed meanwhile.) From the start counts the CPU time before the library saw the
 * thread (the loader, an exec chain's earlier images) that no sample can stand for; the
 * span leaves start-up out but is empty where the collector ran only at the end (a fork
 * child, a program that makes no call the hooks see); it is used from 10 samples' worth,
 * its first sample carrying up to a period from before it and its last leaving up to a
 * period after it. Returns the threads checked.
 */
static unsigned assert_weights_match_cpu(yajl_val t, const char *what, double min_samples)
{
	enum { MAX_THREADS = 512 };
	static struct thread_cpu th[MAX_THREADS];
	size_t n = 0;
	yajl_val ev = isc_trace_events(t);
	for (size_t i = 0; i < len_of(ev); i++) {
		yajl_val e = at(ev, i);
		const char *type = isc_trace_str(e, "type"), *name = isc_trace_str(e, "name");
		if (type && name && strcmp(type, "counter") == 0 && strcmp(name, "cpu_time") == 0) {
			struct thread_cpu *c = thread_of(th, &n, MAX_THREADS,
							 isc_trace_int(e, "metadata/thread_id", 0));
			double ts = isc_trace_num(e, "timestamp_start_us", 0);
			double v = isc_trace_num(e, "metadata/value", 0);
			if (c->first_ts < 0 || ts < c->first_ts) {
				c->first_ts = ts;
				c->first_us = v;
			}
			if (ts >= c->last_ts) {
				c->last_ts = ts;
				c->last_us = v;
			}
		}
	}
	for (size_t i = 0; i < len_of(ev); i++) {
		yajl_val e = at(ev, i);
		const char *type = isc_trace_str(e, "type");
		if (type == NULL || strcmp(type, "cpu_sample") != 0) {
			continue;
		}
		struct thread_cpu *c =
			thread_of(th, &n, MAX_THREADS, isc_trace_int(e, "thread_id", 0));
		double ts = isc_trace_num(e, "timestamp_us", 0);
		for (int k = 0; k < 2 && c->first_ts >= 0 && ts <= c->last_ts; k++) {
			if (k == 0 || ts > c->first_ts) {
				c->weight_us[k] += isc_trace_num(e, "weight_us", 0);
				c->samples[k]++;
			}
		}
	}
	double hz = (double)isc_trace_int(t, "trace_metadata/sampling/cpu_hz", 0);
	cr_assert_gt(hz, 0, "%s: sampling on", what);
	double period_us = 1e6 / hz < 10000 ? 10000 : 1e6 / hz;
	unsigned checked = 0;
	for (size_t i = 0; i < n; i++) {
		const struct thread_cpu *c = &th[i];
		double cpu[2] = { c->last_us, c->last_us - c->first_us };
		if (c->first_ts < 0 || cpu[0] < 20 * period_us) {
			continue;
		}
		checked++;
		bool ok = false;
		for (int k = 0; k < 2 && !ok; k++) {
			ok = cpu[k] >= 10 * period_us &&
			     fabs(c->weight_us[k] - cpu[k]) <= 0.1 * cpu[k] &&
			     c->samples[k] >= min_samples * cpu[k] / period_us;
		}
		cr_expect(ok,
			  "%s: thread %lld computed %.1f ms (%.1f ms between its first and last "
			  "readings); its samples: %u weighing %.1f ms (%u weighing %.1f ms)",
			  what, c->tid, cpu[0] / 1e3, cpu[1] / 1e3, c->samples[0],
			  c->weight_us[0] / 1e3, c->samples[1], c->weight_us[1] / 1e3);
	}
	return checked;
}

static void assert_split(yajl_val t, const char *const names[3], const char *what)
{
	static const double want[3] = { 60, 30, 10 };
	double pct[3];
	size_t hits = 0;
	size_t n = shares(t, names, pct, &hits);
	cr_assert_geq(hits, 100, "%s: %zu samples in the three functions", what, hits);
	for (int m = 0; m < 3; m++) {
		double p = want[m] / 100, se = 100 * sqrt(p * (1 - p) / (double)hits);
		double tol = 4 * se > 5 ? 4 * se : 5;
		cr_expect(pct[m] > want[m] - tol && pct[m] < want[m] + tol,
			  "%s: %s has %.1f %% of the hot CPU time, expected %.0f +- %.1f "
			  "(%zu samples; %.1f/%.1f/%.1f)",
			  what, names[m], pct[m], want[m], tol, hits, pct[0], pct[1], pct[2]);
	}
	yajl_val s = isc_trace_get(t, "trace_metadata/sampling");
	cr_assert_not_null(s, "trace_metadata.sampling");
	cr_assert_eq(isc_trace_int(s, "cpu_hz", 0), 1000);
	cr_assert_gt(isc_trace_int(s, "signal", 0), 0);
	cr_assert_geq(isc_trace_int(s, "samples", 0), (long long)n);
	cr_assert_geq(assert_weights_match_cpu(t, what, 0), 1, "%s: a thread computed long enough",
		      what);
}

static const char *const c_names[3] = { "hot_six", "hot_three", "hot_one" };

/* The line of path where text first appears (1-based). */
static long source_line(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char buf[512];
	for (long n = 1; fgets(buf, sizeof(buf), f); n++) {
		if (strstr(buf, text)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("%s has no \"%s\"", path, text);
	return 0;
}

Test(cpu_samples, c_split)
{
	const char *argv[] = { isc_test_workload("wl-hot"), HOT_MS, NULL };
	yajl_val t = run_traced(argv, rate);
	assert_split(t, c_names, "C");
	/* the handler's own account: per-sample medians beside the sums; no Python here, so no
	 * time at all in a Python walk (not even the clock reads that would time one) */
	double sum = isc_trace_num(t, "trace_metadata/sampling/handler_us", -1);
	double med = isc_trace_num(t, "trace_metadata/sampling/handler_median_us", -1);
	double py_med = isc_trace_num(t, "trace_metadata/sampling/python_walk_median_us", -1);
	double py_sum = isc_trace_num(t, "trace_metadata/sampling/python_walk_us", -1);
	cr_assert(med > 0 && med <= sum, "median %.3f us of a %.3f us sum", med, sum);
	cr_assert(py_med == 0 && py_sum == 0, "Python walk: median %.3f us, %.3f us in all", py_med,
		  py_sum);
	/* a sample's weight is its timer's period per expiry: the thread's CPU clock (a system
	 * call) is read at the first sample of a timer, not at every sample */
	long long samples = isc_trace_int(t, "trace_metadata/sampling/samples", 0);
	long long clock_reads = isc_trace_int(t, "trace_metadata/sampling/cpu_clock_reads", -1);
	cr_assert(clock_reads >= 1 && clock_reads * 10 <= samples,
		  "%lld CPU clock reads in the handler for %lld samples", clock_reads, samples);
	/* native frames carry module, offset and the build-id of the executable, and the
	 * source line from its line table (the workload is built with -g): hot_six's own
	 * frames are at the line that defines it, or in what it inlined (cpu_ns) */
	long def = source_line(ISC_WORKLOAD_SRC "/wl-hot.c", "HOT(hot_six)");
	long lo = source_line(ISC_WORKLOAD_SRC "/wl-hot.c", "static unsigned long cpu_ns(void)");
	yajl_val frames = isc_trace_get(t, "stacks/frames");
	size_t found = 0, at_def = 0;
	for (size_t i = 0; i < len_of(frames); i++) {
		yajl_val f = at(frames, i);
		const char *fn = isc_trace_str(f, "function");
		if (fn && strcmp(fn, "hot_six") == 0) {
			found++;
			cr_assert_str_eq(isc_trace_str(f, "kind"), "native");
			cr_assert_str_eq(isc_trace_str(f, "module"), "wl-hot");
			cr_assert_not_null(isc_trace_str(f, "address"));
			cr_assert_not_null(isc_trace_str(f, "build_id"));
			cr_assert_str_eq(isc_trace_str(f, "file"), "wl-hot.c");
			long line = isc_trace_int(f, "line", 0);
			cr_assert(line == def || (line > lo && line < lo + 6),
				  "hot_six at line %ld: not %ld nor cpu_ns's body", line, def);
			at_def += line == def;
		}
	}
	cr_assert(found > 0 && at_def > 0, "%zu frames name hot_six, %zu at line %ld", found,
		  at_def, def);
	yajl_tree_free(t);
}

Test(cpu_samples, c_threads_split)
{
	const char *argv[] = { isc_test_workload("wl-hot"), HOT_MS, "threads", NULL };
	yajl_val t = run_traced(argv, rate);
	assert_split(t, c_names, "C threads");
	yajl_tree_free(t);
}

/* Timers are per thread and a fork child has only the thread that forked: it gets a
 * timer of its own again, and its samples name its own stacks in its own trace. */
static void forked(const char *mode)
{
	const char *argv[] = { isc_test_workload("wl-hot"), HOT_MS, mode, NULL };
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, rate, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: %s", mode, r.err);
	int child = 0;
	cr_assert_eq(sscanf(r.out, "child %d", &child), 1, "stdout: %s", r.out);
	char name[64];
	snprintf(name, sizeof(name), "trace.%d.json", child);
	yajl_val t = isc_test_load_json(isc_test_in_dir(name));
	cr_assert_not_null(t, "no trace from the child (%s)", r.err);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/pid", 0), child);
	char what[64];
	snprintf(what, sizeof(what), "C, %s child", mode);
	assert_split(t, c_names, what);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(cpu_samples, fork_child_sampled)
{
	forked("fork");
}

Test(cpu_samples, fork_child_of_a_thread_sampled)
{
	forked("fork-thread");
}

Test(cpu_samples, cpp_split)
{
	if (!ISC_HAVE_CPP) {
		cr_skip_test("no C++ compiler");
	}
	const char *argv[] = { isc_test_workload("wl-hot-cpp"), HOT_MS, NULL };
	yajl_val t = run_traced(argv, rate);
	assert_split(t, c_names, "C++"); /* mangled: _ZN3hot7Spinner7hot_sixEm */
	yajl_tree_free(t);
}

Test(cpu_samples, sampling_off)
{
	const char *env[] = { "INFERSCOPE_CPU_SAMPLE=0", NULL };
	const char *argv[] = { isc_test_workload("wl-hot"), "200", NULL };
	yajl_val t = run_traced(argv, env);
	cr_assert_eq(isc_trace_count(t, "cpu_sample", NULL), 0);
	cr_assert_eq(isc_trace_int(t, "trace_metadata/sampling/cpu_hz", -1), 0);
	yajl_tree_free(t);
}

/* ---- Python ---- */

/* Interpreters 3.8-3.13 found on this machine (Debian's and pyenv's). */
static size_t pythons(char out[][256], size_t max)
{
	size_t n = 0;
	glob_t g;
	const char *first = ISC_PYTHON3;
	snprintf(out[n++], 256, "%s", first);
	if (glob("/root/.pyenv/versions/3.*/bin/python3", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
			const char *v = strstr(g.gl_pathv[i], "versions/3.");
			int minor = v ? atoi(v + strlen("versions/3.")) : 0;
			if (minor >= 8 && minor <= 13) {
				snprintf(out[n++], 256, "%s", g.gl_pathv[i]);
			} else if (v) {
				cr_log_info("skipped %s: not 3.8-3.13", g.gl_pathv[i]);
			}
		}
		globfree(&g);
	}
	return n;
}

/* The interpreter's minor version (3.x), asked of it. */
static int minor_of(const char *py)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s -c 'import sys; print(sys.version_info[1])'", py);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	int minor = -1;
	cr_assert_eq(fscanf(p, "%d", &minor), 1, "%s: no version", py);
	pclose(p);
	return minor;
}

static const char *hot_py(void)
{
	static char p[4096];
	snprintf(p, sizeof(p), "%s/hot.py", ISC_WORKLOAD_DIR);
	return p;
}

static void python_split(const char *mode)
{
	char py[16][256];
	size_t n = pythons(py, 16);
	for (size_t i = 0; i < n; i++) {
		const char *argv[] = { py[i], hot_py(), HOT_MS, mode, NULL };
		yajl_val t = run_traced(argv, rate);
		char what[300];
		snprintf(what, sizeof(what), "%s %s", py[i], mode);
		assert_split(t, c_names, what);
		cr_assert_str_eq(isc_trace_str(t, "trace_metadata/sampling/python"), "ok", "%s",
				 what);
		/* the Python frames have file and line */
		yajl_val frames = isc_trace_get(t, "stacks/frames");
		bool line = false;
		for (size_t k = 0; k < len_of(frames) && !line; k++) {
			yajl_val f = at(frames, k);
			const char *fn = isc_trace_str(f, "function"),
				   *file = isc_trace_str(f, "file");
			line = fn && strcmp(fn, "hot_six") == 0 && file && strstr(file, "hot.py") &&
			       isc_trace_int(f, "line", 0) == 25;
		}
		cr_expect(line, "%s: a python frame hot_six at hot.py:25", what);
		/* 3.11+: the main thread's state lies in the interpreter's static data and its
		 * frames in its data-stack chunks, read in place; a sample of it makes no
		 * process_vm_readv (the first finds the thread state; a chunk list that
		 * changed is read again) */
		long long samples = isc_trace_int(t, "trace_metadata/sampling/samples", 0);
		long long reads = isc_trace_int(t, "trace_metadata/sampling/python_reads", -1);
		if (strcmp(mode, "slices") == 0 && minor_of(py[i]) >= 11) {
			cr_expect(reads >= 0 && reads * 4 <= samples,
				  "%s: %lld process_vm_readv in the Python walks of %lld samples",
				  what, reads, samples);
		}
		yajl_tree_free(t);
	}
}

Test(cpu_samples, python_split_every_version)
{
	python_split("slices");
}

Test(cpu_samples, python_threads_every_version)
{
	python_split("threads");
}

/*
 * Python's ThreadingHTTPServer under a bounded loopback load: four keep-alive clients of
 * 200 requests, each computing 2 ms of the handler's CPU time (400 ms a handler, 20 sampling
 * periods twice over, on any interpreter). Its handler threads compute in bursts
 * between blocking calls and hand the GIL around, so they are seldom running at the
 * kernel's tick, where CPU timers are checked: their samples must still weigh their CPU
 * time (at the default rate).
 */
Test(cpu_samples, threaded_server_handlers_sampled)
{
	char script[512];
	snprintf(script, sizeof(script), "%s/threaded_server.py", ISC_WORKLOAD_DIR);
	const char *argv[] = { ISC_PYTHON3, script, "4", "200", "2000", NULL };
	const char *env[] = { NULL };
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "exited %d: %s %s", r.status,
		  r.out, r.err);
	cr_assert(strcmp(r.out, "served 800\n") == 0, "stdout: %s", r.out);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t, "no trace (stderr: %s)", r.err);
	unsigned n = assert_weights_match_cpu(t, "threaded http.server", 0.75);
	cr_assert_geq(n, 4, "the four handler threads computed long enough (%u threads)", n);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* A Python fork child's samples are its own: its stacks and frames read from its
 * memory, while the parent, alive at the same addresses, runs parent_spin(). */
Test(cpu_samples, python_fork_child_reads_its_own_frames)
{
	const char *argv[] = { ISC_PYTHON3, hot_py(), HOT_MS, "fork", NULL };
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, rate, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
	int child = 0;
	const char *line = strstr(r.out, "child ");
	cr_assert(line && sscanf(line, "child %d", &child) == 1, "stdout: %s", r.out);
	char name[64];
	snprintf(name, sizeof(name), "trace.%d.json", child);
	yajl_val t = isc_test_load_json(isc_test_in_dir(name));
	cr_assert_not_null(t, "no trace from the child (%s)", r.err);
	assert_split(t, c_names, "Python fork child");
	static const char *const parent[3] = { "parent_spin", "hot_six", "hot_three" };
	double pct[3];
	size_t hits = 0;
	shares(t, parent, pct, &hits);
	cr_assert_eq(pct[0], 0, "the child's samples name the parent's parent_spin (%.1f %%)",
		     pct[0]);
	yajl_tree_free(t);
	isc_run_free(&r);
}

/* The extension is built with each interpreter's own headers where it has them. */
Test(cpu_samples, c_extension_under_python)
{
	char py[16][256];
	size_t n = pythons(py, 16);
	size_t built = 0;
	for (size_t i = 0; i < n; i++) {
		char cmd[16384], dir[4096];
		snprintf(dir, sizeof(dir), "%s/ext%zu", isc_test_dir(), i);
		snprintf(cmd, sizeof(cmd),
			 "mkdir -p %s && cd %s && inc=$(%s -c 'import sysconfig; "
			 "print(sysconfig.get_paths()[\"include\"])') && suf=$(%s -c 'import "
			 "sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))') && test -f "
			 "$inc/Python.h && cc -O1 -shared -fPIC -I$inc %s/hotext.c -o hotext$suf "
			 "2>/dev/null",
			 dir, dir, py[i], py[i], ISC_WORKLOAD_DIR);
		if (system(cmd) != 0) {
			cr_log_info("%s: no headers, the extension is not built", py[i]);
			continue;
		}
		built++;
		const char *argv[] = { py[i], hot_py(), HOT_MS, "ext", dir, NULL };
		yajl_val t = run_traced(argv, rate);
		static const char *const ext[3] = { "ext_six", "ext_three", "ext_one" };
		char what[300];
		snprintf(what, sizeof(what), "%s ext", py[i]);
		assert_split(t, ext, what);
		yajl_tree_free(t);
	}
	if (built == 0) {
		cr_skip_test("no interpreter with headers: the extension cannot be built");
	}
}

/* ---- the program's own signals, blocking calls ---- */

static void own_signal(const char *mode)
{
	struct isc_run plain, traced;
	const char *argv[] = { isc_test_workload("wl-own-signals"), mode, NULL };
	cr_assert_eq(isc_test_run(argv, rate, false, isc_test_dir(), &plain), 0);
	cr_assert_eq(isc_test_run(argv, rate, true, isc_test_dir(), &traced), 0);
	cr_assert_eq(plain.status, traced.status, "exit status %d vs %d (%s)", plain.status,
		     traced.status, traced.err);
	cr_assert_str_eq(plain.out, traced.out);
	cr_assert(strstr(traced.out, "handler=mine hits>0=1"), "%s", traced.out);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t);
	cr_assert_gt(isc_trace_count(t, "cpu_sample", NULL), 0, "sampled alongside %s", mode);
	int sig = (int)isc_trace_int(t, "trace_metadata/sampling/signal", 0);
	cr_assert(sig >= SIGRTMIN && sig <= SIGRTMAX, "a real-time signal, got %d", sig);
	yajl_tree_free(t);
	isc_run_free(&plain);
	isc_run_free(&traced);
}

Test(cpu_samples, program_sigprof_keeps_working)
{
	own_signal("prof");
}

Test(cpu_samples, program_sigalrm_keeps_working)
{
	own_signal("alarm");
}

Test(cpu_samples, no_eintr_from_sampling)
{
	const char *argv[] = { isc_test_workload("wl-eintr"), NULL };
	const char *env[] = { "INFERSCOPE_CPU_SAMPLE=10000", NULL };
	struct isc_run r;
	cr_assert_eq(isc_test_run(argv, env, true, isc_test_dir(), &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s %s", r.out, r.err);
	cr_assert(strstr(r.out, "eintr=0"), "%s", r.out);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t);
	cr_assert_gt(isc_trace_count(t, "cpu_sample", NULL), 10,
		     "the blocking threads computed too");
	yajl_tree_free(t);
	isc_run_free(&r);
}
