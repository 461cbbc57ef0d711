/* SPDX-License-Identifier: MIT */
/*
 * Issue 14's "Done means", as one test. A long-running server on the simulated GPU
 * (fleet-serve: steps of one upload, three kernels, one download and a sync, each step an
 * outermost "step" scope) runs under the library in continuous mode; `inferscope watch`
 * follows its segment directory and a real Prometheus (Debian's package) scrapes the
 * watcher on loopback; `inferscope capture` asks the server for 20 steps; the server is
 * killed with SIGKILL. Then everything must agree:
 *
 * - the window's trace holds exactly 20 steps and their GPU work (60 kernels, 40 copies,
 *   20 synchronisations);
 * - what Prometheus answers through its HTTP API for one moment (the latest segment's
 *   gauges, the counters summed over the segments analysed by then) equals what
 *   `inferscope-analyze -f json` says of the same segments: shares to 1e-6, the verdict,
 *   launch and sync counts exactly; after the kill, the counters equal the sums over
 *   every closed segment;
 * - the last segments, the open .part included, are read by inferscope-analyze; each
 *   segment's launches and syncs are those of its steps (give or take the step cut by the
 *   rotation), and all the segments together hold exactly the steps the server says it
 *   completed with their GPU work: nothing lost (the recorder counts no drop here: the
 *   retention outlasts the test, and the test asserts that too).
 *
 * The server stops stepping on request (a shared control file) before the kill, so that
 * "exactly" has a number to be compared with; it is killed while its recorder still
 * rotates segments. Everything polls for its condition with bounded waits; nothing
 * compares timings.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "fleet-util.h"
#include "prom-util.h"

TestSuite(done, .init = fleet_dir_setup, .fini = fleet_dir_teardown, .timeout = 600);

#define NCAT 6
static const char *const cats[NCAT] = { "cpu_preprocessing", "h2d_copy", "gpu_compute",
					"d2h_copy",	     "idle",	 "framework_overhead" };

/* What inferscope-analyze -f json says of one file. */
struct seg {
	long inputs, events, steps, kernels, copies, launches, syncs, dropped;
	double share[NCAT];
	double start_us; /* the window's start on the trace clock */
	char verdict[32];
};

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL ? v : "";
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static long sum_counts(yajl_val stats, const char *table, const char *prefix, const char *contains)
{
	const char *path[] = { table, NULL };
	yajl_val rows = yajl_tree_get(stats, path, yajl_t_array);
	long n = 0;
	for (size_t i = 0; rows != NULL && i < YAJL_GET_ARRAY(rows)->len; i++) {
		yajl_val row = YAJL_GET_ARRAY(rows)->values[i];
		const char *np[] = { "name", NULL }, *cp[] = { "count", NULL };
		yajl_val name = yajl_tree_get(row, np, yajl_t_string);
		yajl_val count = yajl_tree_get(row, cp, yajl_t_number);
		const char *s = name ? YAJL_GET_STRING(name) : "";
		if (count != NULL && (prefix == NULL || strncmp(s, prefix, strlen(prefix)) == 0) &&
		    (contains == NULL || strstr(s, contains) != NULL)) {
			n += YAJL_GET_INTEGER(count);
		}
	}
	return n;
}

static double num(yajl_val root, const char *a, const char *b)
{
	const char *path[] = { a, b, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_number);
	return v != NULL ? YAJL_GET_DOUBLE(v) : NAN;
}

/* inferscope-analyze ARGS -f json (ARGS as the shell reads them): exit 0 and the counts;
 * false when it failed. */
static bool analyze_args(const char *file, const char *args, struct seg *s)
{
	char out[4200], cmd[13000];
	snprintf(out, sizeof(out), "%s/analysis.json", fleet_dir);
	snprintf(cmd, sizeof(cmd), "'%s' -f json --top 100000 -o '%s' %s 2>'%s/analysis.err'",
		 env("ISC_ANALYZE"), out, args, fleet_dir);
	if (system(cmd) != 0) {
		return false;
	}
	FILE *f = fopen(out, "r");
	cr_assert_not_null(f);
	static char text[1 << 22];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	char err[256];
	yajl_val root = yajl_tree_parse(text, err, sizeof(err));
	cr_assert_not_null(root, "%s: %s", file, err);
	const char *sp[] = { "statistics", NULL };
	yajl_val stats = yajl_tree_get(root, sp, yajl_t_object);
	cr_assert_not_null(stats);
	memset(s, 0, sizeof(*s));
	s->steps = sum_counts(stats, "scopes", "step", NULL);
	s->kernels = sum_counts(stats, "kernels", NULL, NULL);
	s->copies = sum_counts(stats, "gpu_copies", NULL, NULL);
	s->launches = sum_counts(stats, "cuda_api", "cudaLaunch", NULL);
	s->syncs = sum_counts(stats, "cuda_api", "cuda", "Synchronize");
	s->dropped = (long)(num(root, "data_quality", "dropped_events") +
			    num(root, "data_quality", "cupti_dropped_records"));
	double window = num(root, "summary", "end_to_end_latency_us");
	s->start_us = num(root, "window", "start_us");
	s->events = (long)num(root, "data_quality", "events");
	const char *ip[] = { "inputs", NULL };
	yajl_val inputs = yajl_tree_get(root, ip, yajl_t_array);
	s->inputs = inputs != NULL ? (long)YAJL_GET_ARRAY(inputs)->len : 0;
	const char *bp[] = { "timeline_breakdown", NULL };
	yajl_val rows = yajl_tree_get(root, bp, yajl_t_array);
	for (size_t i = 0; rows != NULL && i < YAJL_GET_ARRAY(rows)->len; i++) {
		yajl_val row = YAJL_GET_ARRAY(rows)->values[i];
		const char *cp[] = { "category", NULL }, *dp[] = { "duration_us", NULL };
		const char *c = YAJL_GET_STRING(yajl_tree_get(row, cp, yajl_t_string));
		double d = YAJL_GET_DOUBLE(yajl_tree_get(row, dp, yajl_t_number));
		for (int k = 0; k < NCAT; k++) {
			if (c != NULL && strcmp(c, cats[k]) == 0) {
				s->share[k] = window > 0 ? d / window : 0;
			}
		}
	}
	const char *vp[] = { "bottleneck", "type", NULL };
	yajl_val v = yajl_tree_get(root, vp, yajl_t_string);
	snprintf(s->verdict, sizeof(s->verdict), "%s", v ? YAJL_GET_STRING(v) : "");
	yajl_tree_free(root);
	return true;
}

static bool analyze(const char *file, struct seg *s)
{
	char args[4300];
	snprintf(args, sizeof(args), "'%s'", file);
	return analyze_args(file, args, s);
}

static void seg_name(char *out, size_t cap, pid_t pid, unsigned index, bool part)
{
	snprintf(out, cap, "%s/segs/trace.%d.seg-%06u.spill%s", fleet_dir, (int)pid, index,
		 part ? ".part" : "");
}

/* The server's segments on disk: the highest closed index, the open one (0: none). */
static void list_segments(pid_t pid, unsigned *closed_hi, unsigned *part, unsigned *closed_n)
{
	char segs[4200], prefix[64];
	snprintf(segs, sizeof(segs), "%s/segs", fleet_dir);
	snprintf(prefix, sizeof(prefix), "trace.%d.seg-", (int)pid);
	*closed_hi = *part = *closed_n = 0;
	DIR *d = opendir(segs);
	cr_assert_not_null(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) {
			continue;
		}
		unsigned i = (unsigned)strtoul(e->d_name + strlen(prefix), NULL, 10);
		if (strstr(e->d_name, ".spill.part") != NULL) {
			cr_assert_eq(*part, 0, "two open segments");
			*part = i;
		} else if (strstr(e->d_name, ".pb.gz") == NULL) {
			*closed_hi = i > *closed_hi ? i : *closed_hi;
			(*closed_n)++;
		}
	}
	closedir(d);
}

static pid_t start_server(const char *ctl, FILE **out)
{
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char err[4200], output[4200];
		dup2(p[1], 1);
		snprintf(err, sizeof(err), "%s/server.err", fleet_dir);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		snprintf(output, sizeof(output), "%s/segs/trace.json", fleet_dir);
		setenv("LD_PRELOAD", env("ISC_PRELOAD"), 1);
		setenv("XDG_RUNTIME_DIR", fleet_dir, 1);
		setenv("INFERSCOPE_MODE", "continuous", 1);
		setenv("INFERSCOPE_SEGMENT", "500ms", 1);
		setenv("INFERSCOPE_RETAIN", "1h", 1); /* outlasts the test: nothing dropped */
		setenv("INFERSCOPE_OUTPUT", output, 1);
		const char *serve = env("ISC_FLEET_SERVE");
		execl(serve, serve, "3600", ctl, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*out = fdopen(p[0], "r");
	char line[64] = "";
	cr_assert_not_null(fgets(line, sizeof(line), *out), "the server did not start");
	cr_assert_eq(strncmp(line, "ready ", 6), 0, "%s", line);
	return pid;
}

static uint64_t *map_control(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 3 * sizeof(uint64_t)), 0);
	uint64_t *m = mmap(NULL, 3 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	cr_assert_neq(m, MAP_FAILED);
	return m;
}

static double q_at(const char *prom, pid_t pid, const char *metric, const char *labels, double at)
{
	char q[512];
	snprintf(q, sizeof(q), "%s{pid=\"%d\"%s%s}", metric, (int)pid, labels ? "," : "",
		 labels ? labels : "");
	return prom_query(prom, q, at, NULL);
}

/* The metrics Prometheus held at one moment against inferscope-analyze's reading of
 * the same segments: K analysed by then, the gauges the K-th's, the counters the sums
 * over 1..K. Returns K. */
static unsigned compare_metrics(const char *prom, pid_t pid, double at)
{
	double k = q_at(prom, pid, "inferscope_segments_total", NULL, at);
	cr_assert(!isnan(k) && k >= 1, "segments analysed at %.3f: %g", at, k);
	unsigned K = (unsigned)k;
	struct seg s, last;
	long launches = 0, syncs = 0, dropped = 0;
	char path[4200];
	for (unsigned i = 1; i <= K; i++) {
		seg_name(path, sizeof(path), pid, i, false);
		cr_assert(analyze(path, &s), "%s", path);
		launches += s.launches;
		syncs += s.syncs;
		dropped += s.dropped;
		last = s;
	}
	for (int c = 0; c < NCAT; c++) {
		char l[64];
		snprintf(l, sizeof(l), "category=\"%s\"", cats[c]);
		double v = q_at(prom, pid, "inferscope_breakdown_ratio", l, at);
		cr_expect(fabs(v - last.share[c]) <= 1e-6,
			  "segment %u, %s: Prometheus %.9f, analyze %.9f", K, cats[c], v,
			  last.share[c]);
	}
	char l[64];
	snprintf(l, sizeof(l), "inferscope_verdict=\"%s\"", last.verdict);
	cr_expect_eq(q_at(prom, pid, "inferscope_verdict", l, at), 1, "segment %u: verdict %s", K,
		     last.verdict);
	cr_expect_eq(q_at(prom, pid, "inferscope_cuda_launches_total", NULL, at), (double)launches,
		     "launches over segments 1..%u", K);
	cr_expect_eq(q_at(prom, pid, "inferscope_cuda_syncs_total", NULL, at), (double)syncs);
	cr_expect_eq(q_at(prom, pid, "inferscope_dropped_events_total", NULL, at), (double)dropped);
	cr_expect_eq(dropped, 0, "nothing dropped with a retention longer than the test");
	return K;
}

/* Every segment of the server, closed and open, summed. */
static void sum_segments(pid_t pid, struct seg *total, struct seg *cache, unsigned cap,
			 bool check_each)
{
	unsigned hi, part, n;
	list_segments(pid, &hi, &part, &n);
	cr_assert_eq(n, hi, "closed segments 1..%u, none missing (%u)", hi, n);
	cr_assert_lt(hi, cap);
	memset(total, 0, sizeof(*total));
	char path[4200];
	for (unsigned i = 1; i <= hi + (part != 0); i++) {
		struct seg s;
		bool open = i == part;
		if (!open && cache[i].steps >= 0) {
			s = cache[i]; /* closed: never written again */
		} else {
			seg_name(path, sizeof(path), pid, i, open);
			if (!analyze(path, &s)) {
				cr_assert(open && !check_each, "%s cannot be read", path);
				continue; /* renamed while we read it: the next round has it */
			}
			if (!open) {
				cache[i] = s;
			}
		}
		if (check_each) {
			/* a GPU record without its time would stretch the window to 0 (a
			 * segment opened after the last step may hold no event at all) */
			cr_expect(i == 1 || s.events == 0 || s.start_us >= cache[1].start_us,
				  "segment %u starts at %.3f us, before the first (%.3f)", i,
				  s.start_us, cache[1].start_us);
			/* a step cut by the rotation puts its launches in one segment and
			 * its scope in the next: three at most */
			cr_expect(labs(s.launches - 3 * s.steps) <= 3,
				  "segment %u: %ld launches for %ld steps", i, s.launches, s.steps);
			cr_expect(labs(s.syncs - s.steps) <= 1, "segment %u: %ld syncs, %ld steps",
				  i, s.syncs, s.steps);
		}
		total->steps += s.steps;
		total->kernels += s.kernels;
		total->copies += s.copies;
		total->launches += s.launches;
		total->syncs += s.syncs;
		total->dropped += s.dropped;
	}
}

static bool all_there(const struct seg *t, long steps)
{
	return t->steps == steps && t->kernels == 3 * steps && t->copies == 2 * steps &&
	       t->launches == 3 * steps && t->syncs == steps;
}

Test(done, capture_scrape_sigkill_consistent)
{
	const char *prometheus = env("ISC_PROMETHEUS");
	if (*prometheus == '\0') {
		cr_skip_test("prometheus is not installed (Debian package 'prometheus', which "
			     "scripts/setup.sh installs for the tests)");
	}
	char segs[4200], log[4200], ctlpath[4200];
	snprintf(segs, sizeof(segs), "%s/segs", fleet_dir);
	cr_assert_eq(mkdir(segs, 0700), 0);

	/* the watcher and Prometheus first: the server's segments are watched from its
	 * first one */
	snprintf(log, sizeof(log), "%s/watch.log", fleet_dir);
	const char *wargv[] = { env("ISC_WATCH"), "--listen", "127.0.0.1:0", segs, NULL };
	pid_t watch = fleet_spawn(wargv, log);
	char *addr = fleet_wait_line(log, "listening on http://", 60);
	cr_assert_not_null(addr, "the watcher did not start");
	*strchr(addr, '/') = '\0';
	char prom[64];
	pid_t pp = prom_start(prometheus, fleet_dir, addr, prom);
	cr_assert_eq(prom_wait(prom, "up{job=\"inferscope\"}", 120), 1, "the watcher is scraped");

	snprintf(ctlpath, sizeof(ctlpath), "%s/control", fleet_dir);
	uint64_t *ctl = map_control(ctlpath);
	FILE *out;
	pid_t pid = start_server(ctlpath, &out);

	/* 20 steps on demand */
	char spid[16], window[4200], cmd[13000];
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	snprintf(window, sizeof(window), "%s/window.json", fleet_dir);
	snprintf(cmd, sizeof(cmd),
		 "XDG_RUNTIME_DIR='%s' '%s' capture %s --steps 20 -o '%s' >'%s/capture.log' 2>&1",
		 fleet_dir, env("ISC_LAUNCHER"), spid, window, fleet_dir);
	cr_assert_eq(system(cmd), 0, "inferscope capture failed (see capture.log)");

	/* Prometheus has scraped the metrics of closed segments (two: the second is one
	 * of steady stepping) */
	char q[256];
	snprintf(q, sizeof(q), "inferscope_segments_total{pid=\"%d\"} >= 2", (int)pid);
	prom_wait(prom, q, 180);
	double at = 0;
	prom_query(prom, q, 0, &at);
	cr_assert_gt(at, 0);
	fleet_sleep_ms(3000); /* every scrape stamped before `at` is stored by now */
	unsigned k = compare_metrics(prom, pid, at);

	/* stop stepping, then find every step on disk */
	__atomic_store_n(&ctl[1], 1, __ATOMIC_RELEASE);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&ctl[2], __ATOMIC_ACQUIRE)) {
		cr_assert_lt(elapsed_s(&t0), 120, "the server did not stop stepping");
		fleet_sleep_ms(50);
	}
	long steps = (long)__atomic_load_n(&ctl[0], __ATOMIC_ACQUIRE);
	cr_assert_gt(steps, 20);
	static struct seg cache[4096];
	for (size_t i = 0; i < sizeof(cache) / sizeof(cache[0]); i++) {
		cache[i].steps = -1;
	}
	struct seg total;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		sum_segments(pid, &total, cache, 4096, false);
		if (all_there(&total, steps) || elapsed_s(&t0) > 120) {
			break;
		}
		fleet_sleep_ms(1000);
	}
	kill(pid, SIGKILL);
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	fclose(out);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	/* after the kill: the segments, the .part included, hold every step and its work */
	sum_segments(pid, &total, cache, 4096, true);
	cr_expect_eq(total.steps, steps, "steps recorded / completed by the server");
	cr_expect_eq(total.launches, 3 * steps);
	cr_expect_eq(total.kernels, 3 * steps, "kernels with their GPU timeline");
	cr_expect_eq(total.copies, 2 * steps);
	cr_expect_eq(total.syncs, steps);
	cr_expect_eq(total.dropped, 0);
	/* the segments given together are one input: the last minutes as one trace */
	char args[4300];
	struct seg merged;
	snprintf(args, sizeof(args), "'%s/segs/trace.%d.seg-'*.spill '%s/segs/trace.%d.seg-'*.part",
		 fleet_dir, (int)pid, fleet_dir, (int)pid);
	cr_assert(analyze_args("the segments", args, &merged), "the segments as one input");
	cr_expect_eq(merged.inputs, 1);
	cr_expect_eq(merged.steps, steps);
	cr_expect_eq(merged.kernels, 3 * steps);
	cr_expect_eq(merged.launches, 3 * steps);
	cr_expect_eq(merged.copies, 2 * steps);
	cr_expect_eq(merged.syncs, steps);

	unsigned hi, part, n;
	list_segments(pid, &hi, &part, &n);
	fprintf(stderr,
		"fleet-done: %ld steps in %u closed segments and a .part; metrics compared "
		"at segment %u, then at %u\n",
		steps, hi, k, hi);
	cr_expect_neq(part, 0, "the open segment is there after SIGKILL");
	cr_expect_gt(hi, k, "segments closed after the metrics compared");
	char trace[4200];
	snprintf(trace, sizeof(trace), "%s/segs/trace.%d.json", fleet_dir, (int)pid);
	cr_expect(!fleet_exists(trace), "no frozen trace after SIGKILL");

	/* the watcher analyses the closed segments written before the kill, and
	 * Prometheus's counters come to their sums */
	snprintf(q, sizeof(q), "inferscope_segments_total{pid=\"%d\"} == %u", (int)pid, hi);
	prom_wait(prom, q, 180);
	fleet_sleep_ms(3000);
	prom_query(prom, q, 0, &at);
	cr_expect_eq(compare_metrics(prom, pid, at), hi);

	/* the window: exactly 20 steps and their GPU work */
	struct seg w;
	cr_assert(analyze(window, &w), "the window's trace is read");
	cr_expect_eq(w.steps, 20);
	cr_expect_eq(w.kernels, 60);
	cr_expect_eq(w.launches, 60);
	cr_expect_eq(w.copies, 40);
	cr_expect_eq(w.syncs, 20);

	cr_expect(WIFEXITED(fleet_stop(pp)), "prometheus ended");
	int ws = fleet_stop(watch);
	cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	munmap(ctl, 3 * sizeof(uint64_t));
	free(addr);
}
