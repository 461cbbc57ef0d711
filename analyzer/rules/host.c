/* SPDX-License-Identifier: MIT */
/* Host family: preprocessing on the critical path, I/O waits, lock contention. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/model/profile.h"
#include "analyzer/rules/rules.h"

/* "tokenize() /srv/app/serve.py:41" as "tokenize() serve.py:41": the action stays one
 * line; the suggestion's where keeps the path. */
static const char *short_site(const char *site, char *buf, size_t n)
{
	const char *at = strstr(site, "() /");
	const char *slash = at != NULL ? strrchr(at, '/') : NULL;
	if (slash == NULL) {
		return site;
	}
	snprintf(buf, n, "%.*s%s", (int)(at + 3 - site), site, slash + 1);
	return buf;
}

static bool preprocessing(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	double cpu = (double)a->cat_ns[ISC_CAT_CPU];
	bool named = a->n_scopes > 0 && a->scopes[0].cpu > 0;
	const struct isc_profile *p = a->prof;
	/* Without a scope, the samples under a model call are the model computing on the
	 * CPU (profile.h, idle_model): that is inference, not the preparing of its inputs. */
	double model = !named && p != NULL && p->cat[ISC_PC_GPU_IDLE] > 0
			       ? (double)p->idle_model / (double)p->cat[ISC_PC_GPU_IDLE]
			       : 0;
	double pre = cpu * (1.0 - model);
	if (pre < isc_thr(&a->th, ISC_THR_CPU_PRE_SHARE) * c->window_ns) {
		return false;
	}
	/* Without a scope, the stacks name the code (profile.h). */
	char site[ISC_LINE];
	const char *scope = named		   ? isc_trace_str(c->t, a->scopes[0].name)
			    : p && p->idle_site[0] ? short_site(p->idle_site, site, sizeof(site))
						   : "host code";
	double in_scope = named ? (double)a->scopes[0].cpu : pre;
	int cores = 0;
	for (size_t i = 0; i < c->t->n_inputs; i++) {
		cores = c->t->inputs[i].cpu_count > cores ? c->t->inputs[i].cpu_count : cores;
	}
	double k = isc_thr(&a->th, ISC_THR_PARALLEL_WORKERS);
	k = cores > 0 && cores < k ? cores : k;
	/* Either spread the work over k workers, or run it beside the GPU (pipelining):
	 * whichever hides more. */
	double parallel = in_scope * (1.0 - 1.0 / k);
	double overlap = fmin(in_scope, (double)a->gpu_busy_ns);
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	/* Most of the code's samples run below a data loader's fetch in a program without
	 * loading workers: the input pipeline is the lever, with or without a GPU. */
	double rest = p != NULL ? (double)(p->cat[ISC_PC_GPU_IDLE] - p->idle_model) : 0;
	bool loading = p != NULL && p->worker_threads == 0 && rest > 0 &&
		       2.0 * (double)p->idle_loading >= rest;
	if (!isc_has_gpu_work(a) && loading) {
		isc_sugg_text(s->action, sizeof(s->action),
			      "Take '%s' off the critical path: it prepares the input in the "
			      "main process's data loader; load in parallel workers (DataLoader "
			      "num_workers, up to %.0f) so that the next batches are ready while "
			      "the model runs",
			      scope, k);
		isc_sugg_text(s->rationale, sizeof(s->rationale),
			      "While the main process loads a batch the model waits; workers "
			      "load the next batches beside it");
		isc_sugg_evidence(s,
				  "%s of the host's samples outside the model run below the data "
				  "loader's fetch",
				  isc_fmt_pct(b2, (double)p->idle_loading / rest));
	} else if (!isc_has_gpu_work(a)) {
		/* No GPU: the code is the run's own work, not what keeps a device waiting. */
		isc_sugg_text(s->action, sizeof(s->action),
			      "Make '%s' cheaper: it is the host code on the critical path (a "
			      "faster algorithm or library, batching, caching its results, or "
			      "spreading it over threads or processes)%s%s%s",
			      scope,
			      p != NULL && p->worker_threads > 0 ? "; the program already has "
								   "data-loading workers ("
								 : "",
			      p != NULL && p->worker_threads > 0 ? p->workers_how : "",
			      p != NULL && p->worker_threads > 0 ? ")" : "");
		isc_sugg_text(s->rationale, sizeof(s->rationale),
			      "The window's time goes to computing on the host; halving the "
			      "computing on the critical path shortens the run");
		isc_sugg_evidence(s,
				  "the host computes for %s (%s of the window, a union over "
				  "threads)",
				  isc_fmt_dur(b1, cpu), isc_fmt_pct(b2, cpu / c->window_ns));
	} else if (p != NULL && p->worker_threads > 0) {
		/* Workers exist: more of them is not the advice; the code on the path is. */
		isc_sugg_text(s->action, sizeof(s->action),
			      "Make '%s' cheaper or take it off the critical path (a faster or "
			      "batched implementation, overlap with GPU work of the previous "
			      "batch); the program already has data-loading workers (%s)",
			      scope, p->workers_how);
	} else {
		isc_sugg_text(
			s->action, sizeof(s->action),
			"Take '%s' off the critical path: run it "
			"in parallel workers (DataLoader num_workers, a thread pool, a faster "
			"or batched implementation) and overlap it with GPU work of the "
			"previous batch",
			scope);
	}
	if (isc_has_gpu_work(a)) {
		isc_sugg_text(s->rationale, sizeof(s->rationale),
			      "While the host prepares inputs the "
			      "GPU has nothing to do; preprocessing spread over %.0f workers or "
			      "pipelined "
			      "with inference stops stalling the GPU",
			      k);
		isc_sugg_evidence(s,
				  "the host computes with the GPU idle for %s (%s of the window)",
				  isc_fmt_dur(b1, cpu), isc_fmt_pct(b2, cpu / c->window_ns));
	}
	if (model > 0) {
		isc_sugg_evidence(s,
				  "%s of its CPU samples run the model itself (a framework's model "
				  "call): left out of the preprocessing",
				  isc_fmt_pct(b2, model));
	}
	if (named) {
		isc_sugg_evidence(s, "scope '%s' accounts for %s of it (%llu calls)", scope,
				  isc_fmt_dur(b1, in_scope),
				  (unsigned long long)a->scopes[0].count);
	}
	(void)parallel;
	(void)overlap;
	/* Two changes, re-timed: the scope k times faster (workers), or run ahead on a worker
	 * overlapped with the previous step's GPU work; the better one is suggested. */
	struct isc_change fast = { .op = ISC_WI_SCALE,
				   .sel = named ? ISC_SEL_SCOPE : ISC_SEL_HOST_CODE,
				   .pattern = named ? scope : NULL,
				   .factor = 1.0 / k,
				   .after = INT64_MIN };
	struct isc_change ahead = fast;
	ahead.op = ISC_WI_OFFLOAD;
	ahead.factor = 1;
	int64_t b0, a0;
	double g_fast = 0, g_ahead = 0;
	if (c->a->causal != NULL) {
		isc_whatif_run(c->t, c->a, &fast, &b0, &a0, &g_fast);
		isc_whatif_run(c->t, c->a, &ahead, &b0, &a0, &g_ahead);
	}
	char what[ISC_LINE];
	if (g_ahead > g_fast) {
		isc_sugg_text(what, sizeof(what),
			      "'%s' overlapped with the previous step's %s (%.0f x faster "
			      "gives %.1f %%)",
			      scope, isc_has_gpu_work(a) ? "GPU work" : "work", k, g_fast);
		s->improvement_pct = isc_sugg_simulate(c, &ahead, s, what);
	} else {
		isc_sugg_text(what, sizeof(what),
			      "'%s' %.0f x faster (overlapped with the previous step gives %.1f "
			      "%%)",
			      scope, k, g_ahead);
		s->improvement_pct = isc_sugg_simulate(c, &fast, s, what);
	}
	return true;
}

static bool wait_rule(struct isc_rule_ctx *c, struct isc_suggestion *s, const int *cats, int ncats,
		      const char *what)
{
	const struct isc_analysis *a = c->a;
	int64_t on_idle = 0, total = 0;
	uint64_t n = 0;
	struct isc_named_ns top = { 0, 0 };
	for (int i = 0; i < ncats; i++) {
		on_idle += a->waits.on_idle[cats[i]];
		total += a->waits.total[cats[i]];
		n += a->waits.count[cats[i]];
		top = a->waits.top[cats[i]].ns > top.ns ? a->waits.top[cats[i]] : top;
	}
	if (ncats > 1) {
		/* I/O of several kinds: their union, never a sum over kinds or threads. */
		on_idle = a->waits.io_on_idle;
		total = a->waits.io_total;
	}
	if ((double)on_idle < isc_thr(&a->th, ISC_THR_WAIT_SHARE) * c->window_ns) {
		return false;
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	if (isc_has_gpu_work(a)) {
		isc_sugg_evidence(s,
				  "%llu %s calls wait %s (a union over threads), of which %s with "
				  "the GPU idle (%s of the window)",
				  (unsigned long long)n, what, isc_fmt_dur(b1, (double)total),
				  isc_fmt_dur(b2, (double)on_idle),
				  isc_fmt_pct(b3, (double)on_idle / c->window_ns));
	} else {
		isc_sugg_evidence(s,
				  "%llu %s calls wait %s (a union over threads: %s of the window)",
				  (unsigned long long)n, what, isc_fmt_dur(b1, (double)total),
				  isc_fmt_pct(b3, (double)total / c->window_ns));
	}
	isc_sugg_evidence(s, "most of it in %s (%s)", isc_trace_str(c->t, top.name),
			  isc_fmt_dur(b1, (double)top.ns));
	s->improvement_pct = isc_rules_pct(c, (double)on_idle);
	return true;
}

static uint32_t mask_of(const int *cats, int n)
{
	uint32_t m = 0;
	for (int i = 0; i < n; i++) {
		m |= 1u << cats[i];
	}
	return m;
}

static bool io_wait(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	static const int cats[] = { ISC_SYS_IO, ISC_SYS_NET, ISC_SYS_FS };
	if (!wait_rule(c, s, cats, 3, "I/O")) {
		return false;
	}
	struct isc_change ch = { .op = ISC_WI_OFFLOAD,
				 .sel = ISC_SEL_SYSCALL,
				 .sub = mask_of(cats, 3),
				 .factor = 1,
				 .after = INT64_MIN };
	if (!isc_has_gpu_work(c->a)) {
		/* A program without a GPU: what it waits for is its own storage and peers. */
		ch.op = ISC_WI_SCALE;
		ch.factor = 0.5;
		s->improvement_pct = isc_sugg_simulate(c, &ch, s, "I/O calls twice as fast");
		isc_sugg_text(s->action, sizeof(s->action),
			      "Make fewer, larger I/O calls: batch small reads and writes, group "
			      "commits so that one fsync covers many writes, keep hot data in "
			      "memory, or move the I/O off the critical path to another thread");
		isc_sugg_text(s->rationale, sizeof(s->rationale),
			      "The critical path waits in file, disk and network calls; each call "
			      "and each flush to storage costs a round trip that batching shares");
		return true;
	}
	s->improvement_pct = isc_sugg_simulate(c, &ch, s, "I/O done ahead by a prefetching worker");
	isc_sugg_text(s->action, sizeof(s->action),
		      "Hide I/O behind compute: prefetch the "
		      "next inputs in background workers or threads, read asynchronously, cache "
		      "or pre-decode data, and batch small reads");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "The host blocks in reads and network "
		      "calls while the GPU has nothing queued; the same I/O done ahead of time "
		      "costs nothing on the critical path");
	return true;
}

/* Reads of a pipe or terminal: the run waits for input that its writer paces, which no
 * change here can hurry; the what-if asks what the writer keeping up would give. */
static bool input_wait(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	static const int cats[] = { ISC_WAIT_INPUT };
	if (!wait_rule(c, s, cats, 1, "paced read")) {
		return false;
	}
	char b[ISC_FMT_LEN];
	uint64_t n = c->a->waits.count[ISC_WAIT_INPUT];
	isc_sugg_evidence(s,
			  "reads of a pipe or terminal return when their writer has written: "
			  "one every %s of the window on average",
			  isc_fmt_dur(b, c->window_ns / (double)(n > 0 ? n : 1)));
	struct isc_change ch = {
		.op = ISC_WI_SCALE, .sel = ISC_SEL_PACED, .factor = 0, .after = INT64_MIN
	};
	s->improvement_pct = isc_sugg_simulate(c, &ch, s,
					       "the input ready whenever it is read (its writer "
					       "keeping up)");
	isc_sugg_text(s->action, sizeof(s->action),
		      "Feed the input faster: speed up or parallelise the thread or process that "
		      "writes the pipe, or write larger batches at a time (a server reading its "
		      "requests this way is underloaded at this rate, not slow)");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "The %s waits for data that a pipe or terminal delivers at its writer's "
		      "pace: prefetching or reading asynchronously cannot make it arrive sooner, "
		      "so no change in this process is credited with that wait",
		      isc_has_gpu_work(c->a) ? "GPU" : "process");
	return true;
}

static double lock_calls(const struct isc_trace *t, const struct isc_ev *e, const void *arg)
{
	(void)arg;
	return e->type == ISC_T_SYSCALL && e->sub == ISC_SYS_WAIT &&
			       isc_wait_kind_of(isc_trace_str(t, e->name)) == ISC_WK_LOCK
		       ? 0.0
		       : -1.0;
}

/*
 * Lock contention is a lock or condition wait on the critical path: the run re-timed
 * without those waits ends earlier by at least host.wait_share of the window. A pool
 * thread idle in its condition wait until work comes is not on the path (nothing waits
 * for it), and a poll loop waiting for requests is waiting for input, not contending.
 */
static bool lock_wait(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	struct isc_change ch = { .op = ISC_WI_SCALE,
				 .sel = ISC_SEL_CALLBACK,
				 .factor = 0,
				 .after = INT64_MIN,
				 .scale_of = lock_calls };
	int64_t before, after;
	double gain = 0;
	/* The waits in the window, by name; any: one is a graph node (the graph's window
	 * reaches past a trimmed window's host end). None: nothing to re-time without, and
	 * the what-if (a re-timing of the whole graph) is left out. */
	uint64_t n = 0;
	bool any = false;
	int64_t *by = calloc(isc_trace_n_strings(c->t) + 1, sizeof(*by));
	uint32_t top = 0;
	for (size_t i = 0; i < c->t->n; i++) {
		const struct isc_ev *e = &c->t->ev[i];
		if (lock_calls(c->t, e, NULL) != 0.0) {
			continue;
		}
		any |= isc_graph_in_window(a, e);
		if (by != NULL && isc_in_window(c->t, a, e)) {
			n++;
			by[e->name] += e->dur;
			top = by[e->name] > by[top] ? e->name : top;
		}
	}
	free(by);
	if (!any || a->causal == NULL || a->causal->n == 0 ||
	    isc_whatif_run(c->t, a, &ch, &before, &after, &gain) < 0 ||
	    gain < 100.0 * isc_thr(&a->th, ISC_THR_WAIT_SHARE)) {
		return false;
	}
	isc_sugg_evidence(s, "%llu lock, condition and semaphore waits; most of their time in %s",
			  (unsigned long long)n, isc_trace_str(c->t, top));
	s->improvement_pct = isc_sugg_simulate(c, &ch, s, "no lock or condition wait");
	isc_sugg_text(s->action, sizeof(s->action),
		      "Reduce lock contention on the critical path: shorter critical sections, "
		      "finer-grained locks, per-thread queues or a lock-free hand-off between "
		      "the threads");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "The critical path waits for a lock or a condition another thread "
		      "releases: the time it waits is the run's own time");
	return true;
}

const struct isc_rule isc_rules_host[] = {
	{ "host.cpu-preprocessing",
	  "CPU preprocessing dominates (names the scope): "
	  "parallelise or pipeline it",
	  false, preprocessing },
	{ "host.io-wait", "host I/O waits leave the GPU idle: prefetch, async I/O", false,
	  io_wait },
	{ "host.input-wait",
	  "reads of a pipe or terminal pace the run: the input's writer is the bottleneck", true,
	  input_wait },
	{ "host.lock-contention", "lock and condition waits on the critical path", false,
	  lock_wait },
	{ NULL, NULL, false, NULL },
};
