/* SPDX-License-Identifier: MIT */
/*
 * Before/after pairs (issue 11's acceptance, docs/causal-pairs.md): a scenario workload
 * runs as recorded ("before") and with the change its report simulates applied ("after"),
 * both under the preload on the simulated GPU. The prediction is the estimate of the
 * rule that suggests the change (or the answer to a --what-if question) on the "before"
 * trace; the measurement is how much earlier the "after" run's work ends, on the same
 * time base: the end of the window's work from the window's start, in percent of the
 * "before" window. The two must agree within +-25 % (relative) or +-3 pp.
 *
 * The simulated device's times are fixed, the host's are not: a loaded machine slows the
 * host (never the device) and moves both numbers. Before and after run side by side, so
 * that they share the machine's load, and the prediction is re-timed from the very
 * trace whose host was slowed; the host work of the workloads is CPU-time spinning, which
 * a slower host stretches in both runs alike. A pair gets up to three attempts and
 * passes on the first within the tolerance; every attempt is printed.
 *
 * ISC_PAIRS_TABLE=path appends the table's rows (scripts/causal-pairs.sh writes the
 * document with it).
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "analyzer/causal/graph.h"
#include "analyzer/readers/reader.h"

struct pair {
	const char *name;     /* the bottleneck */
	const char *workload; /* tests/workloads/c, without "wl-" */
	const char *after;    /* the argument that applies the fix */
	const char *rule;     /* the prediction: this rule's estimate ... */
	const char *what_if;  /* ... or the answer to this question */
	const char *change;   /* the rule's simulated change must name this (the fix applied) */
	const char *env;      /* for both runs */
	const char *first;    /* the scope of the first iteration: the window starts there */
	const char *th;	      /* thresholds ("key = value" lines) beyond host.parallel_workers */
	const char *before;   /* the arguments of both runs (the after's come after them) */
};

static const struct pair pairs[] = {
	{ "launch-bound tiny kernels", "launch-bound", "graph", "launch.tiny-kernels", NULL,
	  "CUDA graph", "", "step" },
	{ "sync in the hot loop", "sync-every-kernel", "no-sync", "sync.excessive", NULL,
	  "no synchronisation", "", "prepare" },
	{ "pageable copies", "copy-pageable", "pinned", "copy.pageable", NULL, "pinned", "",
	  "batch",
	  /* No pinned copy in the trace to measure: the ratio of the simulated bus
	   * (SIMGPU_BW_H2D_PINNED_GBPS / SIMGPU_BW_H2D_PAGEABLE_GBPS, 25 / 6), as a user
	   * who knows the machine sets it; the default, 2.0, is a slower bus's. */
	  "copy.pinned_speedup = 4.17" },
	{ "CPU preprocessing in front of the GPU", "cpu-preprocess", "tokenize=0.5",
	  "host.cpu-preprocessing", NULL, "'tokenize' 2 x faster", "", "tokenize" },
	{ "device allocation in the steady state", "alloc-churn", "reuse",
	  "alloc.device-steady-state", NULL, "no device allocation", "", "iteration" },
	{ "GPU-bound big kernels", "gpu-bound", "gemm=0.5", NULL, "kernel:gemm_bf16_large*0.5",
	  NULL, "", "step" },
	{ "queue-full launches, kernels faster", "gpu-bound", "gemm=0.5", NULL,
	  "kernel:gemm_bf16_large*0.5", NULL, "SIMGPU_QUEUE_DEPTH=64", "step", NULL, "queue" },
	{ "balanced: one side faster", "balanced", "tokenize=0.5", NULL, "scope:preprocess*0.5",
	  NULL, "", "preprocess" },
	/* GPU-bound behind a full queue: faster host code gains nothing, and the what-if
	 * must say so (a share of host time would not). */
	{ "queue-full launches, host faster", "gpu-bound", "prep=0.5", NULL, "scope:prep*0.5", NULL,
	  "SIMGPU_QUEUE_DEPTH=64", "step", NULL, "queue prep" },
	/* Stream B waits for stream A through an event (graph-events.c). */
	{ "cross-stream event wait, producer faster", "event-streams", "producer=0.5", NULL,
	  "kernel:producer*0.5", NULL, "", "step" },
	/* A scope whose cost is the GPU work it launches and waits for (the PyTorch pair's
	 * row-by-row normalisation on a GPU): removed, and half of its rows. */
	{ "a scope of tiny kernels and syncs, removed", "cpu-preprocess", "no-norm", NULL,
	  "scope:norm*0", NULL, "", "tokenize", NULL, "norm" },
	{ "a scope of tiny kernels and syncs, half its rows", "cpu-preprocess", "norm=0.5", NULL,
	  "scope:norm*0.5", NULL, "", "tokenize", NULL, "norm" },
};

struct measure {
	double predicted, measured; /* pp of the before window */
	double window_ms;
	char change[ISC_LINE];
};

static void run_one(const struct pair *p, const char *dir, const char *arg)
{
	const char *bin = getenv("ISC_WORKLOADS"), *preload = getenv("ISC_PRELOAD");
	const char *vtime = getenv("ISC_VTIME");
	cr_assert(bin != NULL && preload != NULL && vtime != NULL);
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && timeout 300 env INFERSCOPE_OUTPUT=trace.json LD_PRELOAD=%s:%s %s "
		 "%s/wl-%s %s >/dev/null",
		 dir, vtime, preload, p->env, bin, p->workload, arg);
	cr_assert_eq(run(cmd, NULL, NULL), 0, "%s %s: the run failed", p->workload, arg);
}

static void run_pair(const struct pair *p, char *dir_b, char *dir_a)
{
	cr_assert_not_null(mkdtemp(dir_b));
	cr_assert_not_null(mkdtemp(dir_a));
	char after[256];
	snprintf(after, sizeof(after), "%s %s", p->before != NULL ? p->before : "", p->after);
	run_one(p, dir_b, p->before != NULL ? p->before : "");
	run_one(p, dir_a, after);
}

static struct isc_trace *load_dir(const char *dir)
{
	glob_t g;
	char pattern[4200];
	snprintf(pattern, sizeof(pattern), "%s/trace*.json", dir);
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "%s: no trace", dir);
	struct isc_trace *t = isc_trace_create();
	for (size_t k = 0; k < g.gl_pathc; k++) {
		struct isc_diag d;
		cr_assert_eq(isc_read_file(t, g.gl_pathv[k], NULL, &d), 0, "%s", d.msg);
	}
	globfree(&g);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

/* ask: the what-if on this run (the before's; an after run may have nothing it picks). */
static struct isc_analysis *analyse_dir(const char *dir, const struct pair *p, bool ask,
					struct isc_trace **t)
{
	static struct isc_thresholds th;
	isc_thresholds_init(&th);
	/* k workers for host.cpu-preprocessing: 2, whatever the machine's cores (the fix
	 * applied is tokenising 2 x faster). */
	th.v[ISC_THR_PARALLEL_WORKERS] = 2;
	if (p->th != NULL) {
		struct isc_diag d;
		cr_assert_eq(isc_thresholds_parse(&th, p->name, p->th, strlen(p->th), &d), 0, "%s",
			     d.msg);
	}
	struct isc_analyze_opts o = { .th = &th };
	*t = load_dir(dir);
	/* The steady state: from the first iteration's scope to the end. What comes before
	 * (loading, CUDA's initialisation, first touches of memory) is the same in both runs
	 * and not what the change is about, yet its page faults time differently from run
	 * to run. */
	int64_t start = INT64_MAX, end = INT64_MIN;
	for (size_t i = 0; i < (*t)->n; i++) {
		const struct isc_ev *e = &(*t)->ev[i];
		if (e->type == ISC_T_SCOPE && strcmp(isc_trace_str(*t, e->name), p->first) == 0 &&
		    e->ts < start) {
			start = e->ts;
		}
		end = e->ts + e->dur > end ? e->ts + e->dur : end;
	}
	cr_assert(start != INT64_MAX, "%s: no scope '%s'", dir, p->first);
	o.window_explicit = true;
	o.window_start = start;
	o.window_end = end;
	if (p->what_if != NULL && ask) {
		o.what_if = &p->what_if;
		o.n_what_if = 1;
	}
	struct isc_analysis *a = analyse(*t, &o);
	cr_assert_not_null(a->causal, "%s: no dependency graph", dir);
	return a;
}

static double work_ns(const struct isc_analysis *a)
{
	return (double)(a->causal->end - a->window.start);
}

/* The prediction on the before trace: the rule's estimate or the what-if's answer. */
static double predicted(const struct pair *p, const struct isc_analysis *a, char *change, size_t n)
{
	if (p->what_if != NULL) {
		cr_assert_eq(a->causal->n_whatif, 1);
		cr_assert(a->causal->whatif[0].ok, "%s: %s", p->what_if,
			  a->causal->whatif[0].error);
		snprintf(change, n, "%s", a->causal->whatif[0].what);
		return a->causal->whatif[0].gain_pct;
	}
	for (size_t k = 0; k < a->n_sugg; k++) {
		const struct isc_suggestion *s = &a->sugg[k];
		if (strcmp(s->rule_id, p->rule) != 0) {
			continue;
		}
		for (int j = 0; j < s->n_evidence; j++) {
			const char *e = strstr(s->evidence[j], "simulated");
			if (e != NULL) {
				snprintf(change, n, "%s", e);
			}
		}
		cr_assert(strstr(change, p->change) != NULL,
			  "%s: the simulated change is not the one applied (%s): %s", p->rule,
			  p->change, change);
		return s->improvement_pct;
	}
	cr_assert_fail("%s: %s is not among the %zu suggestions", p->workload, p->rule,
		       (size_t)a->n_sugg);
	return 0;
}

static void measure(const struct pair *p, struct measure *m)
{
	char dir_b[] = "/tmp/isc-pair-b-XXXXXX", dir_a[] = "/tmp/isc-pair-a-XXXXXX";
	run_pair(p, dir_b, dir_a);
	struct isc_trace *tb, *ta;
	struct isc_analysis *b = analyse_dir(dir_b, p, true, &tb);
	struct isc_analysis *a = analyse_dir(dir_a, p, false, &ta);
	cr_assert(b->gpu_timeline && a->gpu_timeline, "%s: no GPU timeline", p->workload);
	double w = (double)(b->window.end - b->window.start);
	m->window_ms = w / 1e6;
	m->predicted = predicted(p, b, m->change, sizeof(m->change));
	m->measured = 100.0 * (work_ns(b) - work_ns(a)) / w;
	isc_analysis_destroy(b);
	isc_analysis_destroy(a);
	isc_trace_destroy(tb);
	isc_trace_destroy(ta);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir_b, dir_a);
	run(cmd, NULL, NULL);
}

static bool within(const struct measure *m)
{
	double err = fabs(m->predicted - m->measured);
	return err <= 3.0 || err <= 0.25 * fabs(m->measured);
}

static void table_row(const struct pair *p, const struct measure *m, int attempt)
{
	const char *path = getenv("ISC_PAIRS_TABLE");
	FILE *f = path != NULL ? fopen(path, "a") : NULL;
	if (f == NULL) {
		return;
	}
	double err = m->predicted - m->measured;
	fprintf(f,
		"| %s | `wl-%s %s%s%s` | `%s` | %.1f ms | %.1f %% | %.1f %% | %+.1f pp (%+.0f %%) "
		"| "
		"%d "
		"| %s |\n",
		p->name, p->workload, p->before != NULL ? p->before : "",
		p->before != NULL ? " " : "", p->after, p->rule != NULL ? p->rule : p->what_if,
		m->window_ms, m->predicted, m->measured, err,
		m->measured != 0 ? 100.0 * err / fabs(m->measured) : 0.0, attempt,
		within(m) ? "yes" : "no");
	fclose(f);
}

static void check_pair(const struct pair *p)
{
	struct measure m = { 0 };
	int attempt;
	for (attempt = 1; attempt <= 3; attempt++) {
		memset(&m, 0, sizeof(m));
		measure(p, &m);
		fprintf(stderr,
			"pair %s (attempt %d): predicted %.1f %%, measured %.1f %% of a %.1f ms "
			"window; %s\n",
			p->name, attempt, m.predicted, m.measured, m.window_ms, m.change);
		if (within(&m)) {
			break;
		}
	}
	table_row(p, &m, attempt > 3 ? 3 : attempt);
	cr_expect(within(&m),
		  "%s: predicted %.1f %% vs measured %.1f %% (three attempts; the last "
		  "shown)",
		  p->name, m.predicted, m.measured);
}

Test(pairs, launch_bound, .timeout = 900)
{
	check_pair(&pairs[0]);
}

Test(pairs, sync_in_loop, .timeout = 900)
{
	check_pair(&pairs[1]);
}

Test(pairs, pageable_copies, .timeout = 900)
{
	check_pair(&pairs[2]);
}

Test(pairs, cpu_preprocessing, .timeout = 900)
{
	check_pair(&pairs[3]);
}

Test(pairs, alloc_churn, .timeout = 900)
{
	check_pair(&pairs[4]);
}

Test(pairs, gpu_bound, .timeout = 900)
{
	check_pair(&pairs[5]);
}

Test(pairs, queue_full, .timeout = 900)
{
	check_pair(&pairs[6]);
}

Test(pairs, balanced, .timeout = 900)
{
	check_pair(&pairs[7]);
}

Test(pairs, queue_full_host, .timeout = 900)
{
	check_pair(&pairs[8]);
}

Test(pairs, event_streams, .timeout = 900)
{
	check_pair(&pairs[9]);
}

Test(pairs, scope_gpu_removed, .timeout = 900)
{
	check_pair(&pairs[10]);
}

Test(pairs, scope_gpu_halved, .timeout = 900)
{
	check_pair(&pairs[11]);
}
