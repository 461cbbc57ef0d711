/* SPDX-License-Identifier: MIT */
/*
 * The verdict, read off the what-ifs (docs/rules.md, "Verdict"). Each lever of the table
 * below is one thing made twice as fast - GPU work, communication, copies, CUDA runtime
 * calls, host code, I/O, lock waits, input waits, sleeps, the run-queue wait of a starved
 * thread, a child process's work - and the what-if engine re-times the run's dependency
 * graph with it. "X-bound" means lever X gains the most, with that gain stated:
 *   balanced   the best lever gains verdict.min_gain_pct of the window and a lever of
 *              another verdict verdict.balance_ratio of its gain (neither dominates);
 *              or, with GPU work, the best GPU-side and host-side levers together gain
 *              more than the best alone by 1 / (1 - balance_ratio) (overlapped_pipeline);
 *   idle       no lever gains verdict.min_gain_pct (waiting_for_input or sleeping when
 *              that lever leads, else untraced), or the input or sleep lever leads;
 *   else the best lever's verdict: the GPU column where the window has GPU work, the host
 *   column where it has none (io_bound, lock_bound ...: no GPU word where no GPU works).
 * A lever is a row of the table: a new path category adds a row, a selector and a name.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/base/escape.h"
#include "analyzer/base/fmt.h"
#include "analyzer/base/par.h"
#include "analyzer/causal/graph.h"

struct vctx {
	const struct isc_trace *t;
	struct isc_analysis *a;
	bool gpu;	    /* the window has GPU work or CUDA calls */
	bool *comm;	    /* per string: a communication kernel (NCCL, gloo) */
	uint8_t *call;	    /* per string: CALL_INPUT, CALL_LOCK or CALL_CHILD for its waits */
	bool *root;	    /* per input: not a child of another input */
	bool waits_child;   /* the window waits for a child in a wait call (wait4 ...) */
	uint16_t child;	    /* the child input the child lever makes faster, UINT16_MAX none */
	uint32_t rq_thread; /* the starved thread (run_queue lever), UINT32_MAX none */
	int64_t rq_ns, cpu_ns;
};

enum {
	CALL_OTHER = ISC_WK_OTHER,
	CALL_INPUT = ISC_WK_INPUT,
	CALL_LOCK = ISC_WK_LOCK,
	CALL_CHILD = ISC_WK_CHILD
};

#define PICK(name) \
	static double name(const struct isc_trace *t, const struct isc_ev *e, const void *p)
#define HALF(cond) ((cond) ? 0.5 : -1.0)

/* The window's own work: every process in the analysis (a child's trace read with its
 * parent's is the run's own work, judged by the same levers), except the children that a
 * parent waits for in a wait call: their work is the child lever's. */
static bool own(const struct vctx *v, const struct isc_ev *e)
{
	return !v->waits_child || v->root[e->input];
}

static bool host_type(const struct isc_ev *e)
{
	return !isc_type_is_gpu(e->type);
}

PICK(pick_gpu)
{
	const struct vctx *v = p;
	(void)t;
	return HALF(isc_type_is_gpu(e->type) && e->type != ISC_T_H2D && e->type != ISC_T_D2H &&
		    !(e->type == ISC_T_KERNEL && v->comm[e->name]));
}

PICK(pick_comm)
{
	const struct vctx *v = p;
	(void)t;
	/* the collectives, and the host's time inside their operators (gloo runs there) */
	return HALF(
		(e->type == ISC_T_KERNEL || e->type == ISC_T_CPU_OP || e->type == ISC_T_SCOPE) &&
		v->comm[e->name]);
}

PICK(pick_copies)
{
	(void)t;
	(void)p;
	return HALF(e->type == ISC_T_H2D || e->type == ISC_T_D2H);
}

PICK(pick_runtime)
{
	(void)t;
	(void)p;
	return HALF(e->type == ISC_T_CUDA_API);
}

PICK(pick_host_code)
{
	const struct vctx *v = p;
	(void)t;
	return HALF(host_type(e) && e->type != ISC_T_CUDA_API && e->type != ISC_T_SYSCALL &&
		    !v->comm[e->name] && own(v, e));
}

static bool own_syscall(const struct vctx *v, const struct isc_ev *e)
{
	return e->type == ISC_T_SYSCALL && own(v, e);
}

PICK(pick_io)
{
	const struct vctx *v = p;
	(void)t;
	return HALF(own_syscall(v, e) &&
		    (e->sub == ISC_SYS_IO || e->sub == ISC_SYS_NET || e->sub == ISC_SYS_FS) &&
		    !(e->flags & ISC_F_PACED) && v->call[e->name] != CALL_INPUT);
}

PICK(pick_locks)
{
	const struct vctx *v = p;
	(void)t;
	return HALF(own_syscall(v, e) && e->sub == ISC_SYS_WAIT && v->call[e->name] == CALL_LOCK);
}

PICK(pick_input)
{
	const struct vctx *v = p;
	(void)t;
	return HALF(own_syscall(v, e) &&
		    ((e->flags & ISC_F_PACED) || v->call[e->name] == CALL_INPUT));
}

PICK(pick_sleep)
{
	const struct vctx *v = p;
	(void)t;
	return HALF(own_syscall(v, e) && e->sub == ISC_SYS_SLEEP);
}

/* The waits for a child process (the parent waits as long as the child works) and the
 * child's host work with them, where its trace is in the analysis. */
static bool child_wait(const struct vctx *v, const struct isc_ev *e)
{
	return e->type == ISC_T_SYSCALL && v->call[e->name] == CALL_CHILD;
}

PICK(pick_child)
{
	const struct vctx *v = p;
	(void)t;
	return HALF(child_wait(v, e) || (e->input == v->child && host_type(e)));
}

enum side { SIDE_GPU, SIDE_HOST };

struct lever {
	const char *id, *what;
	enum side side;
	bool needs_gpu;			      /* only in a window with GPU work */
	enum isc_bound gpu_bound, host_bound; /* the verdict with GPU work, without */
	const char *gpu_cause, *host_cause;
	double (*pick)(const struct isc_trace *t, const struct isc_ev *e, const void *arg);
};

/* The levers, in the order ties are broken. NULL pick: estimated from counters. */
static const struct lever levers[] = {
	{ "gpu", "GPU work", SIDE_GPU, true, ISC_BOUND_GPU, ISC_BOUND_GPU, "gpu_compute",
	  "gpu_compute", pick_gpu },
	{ "communication", "communication", SIDE_GPU, true, ISC_BOUND_GPU, ISC_BOUND_GPU,
	  "communication", "communication", pick_comm },
	{ "copies", "host-device copies", SIDE_GPU, true, ISC_BOUND_MEMORY, ISC_BOUND_MEMORY,
	  "copies", "copies", pick_copies },
	{ "runtime", "CUDA runtime calls", SIDE_HOST, true, ISC_BOUND_CPU, ISC_BOUND_CPU,
	  "framework_overhead", "framework_overhead", pick_runtime },
	{ "host_code", "host code", SIDE_HOST, false, ISC_BOUND_CPU, ISC_BOUND_CPU,
	  "cpu_preprocessing", "host_compute", pick_host_code },
	{ "io", "I/O calls", SIDE_HOST, false, ISC_BOUND_CPU, ISC_BOUND_IO, "host_io_wait",
	  "io_wait", pick_io },
	{ "locks", "lock and condition waits", SIDE_HOST, false, ISC_BOUND_CPU, ISC_BOUND_LOCK,
	  "host_lock_wait", "lock_wait", pick_locks },
	{ "input", "input waits", SIDE_HOST, false, ISC_BOUND_IDLE, ISC_BOUND_IDLE,
	  "waiting_for_input", "waiting_for_input", pick_input },
	{ "sleep", "sleeps", SIDE_HOST, false, ISC_BOUND_IDLE, ISC_BOUND_IDLE, "sleeping",
	  "sleeping", pick_sleep },
	{ "run_queue", "run-queue wait", SIDE_HOST, false, ISC_BOUND_CPU_STARVED,
	  ISC_BOUND_CPU_STARVED, "run_queue_wait", "run_queue_wait", NULL },
	{ "child", "a child process's work", SIDE_HOST, false, ISC_BOUND_CHILD, ISC_BOUND_CHILD,
	  "child_process", "child_process", pick_child },
};
#define N_LEVERS (sizeof(levers) / sizeof(levers[0]))
_Static_assert(N_LEVERS <= ISC_MAX_LEVERS, "the verdict keeps every lever's gain");

/* ends: a re-timing buffer of the caller's (isc_change.ends), NULL for the graph's. */
static double gain_in(const struct vctx *v, const struct lever *l, const struct lever *also,
		      int64_t *ends)
{
	struct isc_change x = { .op = ISC_WI_SCALE,
				.sel = ISC_SEL_CALLBACK,
				.factor = 0.5,
				.after = INT64_MIN,
				.scale_of = also != NULL ? also->pick : NULL,
				.arg = v };
	struct isc_change ch = x;
	ch.scale_of = l->pick;
	ch.also = also != NULL ? &x : NULL;
	ch.ends = ends;
	int64_t before, after;
	double g = 0;
	if (isc_whatif_run(v->t, v->a, &ch, &before, &after, &g) < 0) {
		return 0;
	}
	return g;
}

static double gain_of(const struct vctx *v, const struct lever *l, const struct lever *also)
{
	return gain_in(v, l, also, NULL);
}

/* The recorded time of the graph nodes a lever picks: one that picks nothing gains
 * nothing, and of levers that gain alike the one with more time is the larger. */
static int64_t picked_ns(const struct vctx *v, const struct lever *l)
{
	const struct isc_causal *c = v->a->causal;
	int64_t ns = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct isc_gnode *g = &c->node[i];
		if (l->pick(v->t, &v->t->ev[g->ev], v) >= 0) {
			int64_t t0 = isc_gn_t0(c, g);
			ns += g->t1 - t0 + (g->t1 == t0);
		}
	}
	return ns;
}

/*
 * The levers that read nothing but the model (all but the run queue's and the child's):
 * each what-if re-times the whole graph, and they are independent, so they run on the
 * analysis threads, each thread with a re-timing buffer of its own (worker 0 the graph's).
 */
struct plain_levers {
	const struct vctx *v;
	size_t idx[N_LEVERS];
	size_t n;
	int64_t *picked, *ends[2];
	double *gain;
};

static void plain_lever(void *arg, size_t k, unsigned worker)
{
	struct plain_levers *p = arg;
	size_t i = p->idx[k];
	const struct lever *l = &levers[i];
	if ((p->picked[i] = picked_ns(p->v, l)) > 0) {
		p->gain[i] = gain_in(p->v, l, NULL, p->ends[worker]);
	}
}

static void plain_gains(const struct vctx *v, int64_t *picked, double *gain)
{
	struct plain_levers p = { .v = v, .picked = picked, .gain = gain };
	for (size_t i = 0; i < N_LEVERS; i++) {
		const struct lever *l = &levers[i];
		if ((!l->needs_gpu || v->gpu) && l->pick != NULL && l->pick != pick_child) {
			p.idx[p.n++] = i;
		}
	}
	/* Two workers: a third buffer would cost more memory than the third core saves on
	 * the machines the analyzer targets. Without the buffer, or with --threads 1, the
	 * levers run in turn on the caller's thread. */
	const struct isc_causal *c = v->a->causal;
	p.ends[1] = isc_par_threads() > 1 ? malloc((c->n + 1) * sizeof(*p.ends[1])) : NULL;
	isc_par_run(p.n, p.ends[1] != NULL ? 2 : 1, plain_lever, &p);
	free(p.ends[1]);
}

/* Inputs that are children of another input (its pid is their ppid). */
static void processes(struct vctx *v)
{
	const struct isc_trace *t = v->t;
	for (size_t i = 0; i < t->n_inputs; i++) {
		v->root[i] = true;
		for (size_t j = 0; j < t->n_inputs; j++) {
			if (t->inputs[i].ppid != 0 && t->inputs[i].ppid == t->inputs[j].pid &&
			    t->inputs[i].pid != t->inputs[j].pid) {
				v->root[i] = false;
			}
		}
	}
}

/* A cumulative per-thread counter's growth over [s, e): its last value in it less the
 * last value before it (the first in it when none). */
struct growth {
	double first, last;
	bool any;
};

/* The run-queue lever: the thread on the critical path that waited longest for a CPU,
 * when that wait is at least verdict.cpu_starved_ratio of its CPU time. Half its wait is
 * what the lever gains: the wait lies in the thread's time on the path. */
static double run_queue_gain(struct vctx *v)
{
	const struct isc_trace *t = v->t;
	const struct isc_analysis *a = v->a;
	const struct isc_causal *c = a->causal;
	size_t nt = t->n_threads;
	struct growth *g = calloc(2 * (nt + 1), sizeof(*g));
	double gain = 0;
	v->rq_thread = UINT32_MAX;
	if (g == NULL) {
		goto out;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type != ISC_T_COUNTER || e->thread >= nt ||
		    (e->sub != ISC_CTR_CPU_TIME && e->sub != ISC_CTR_WAIT_TIME) ||
		    e->ts > a->window.host_end) {
			continue;
		}
		struct growth *x = &g[2 * e->thread + (e->sub == ISC_CTR_WAIT_TIME)];
		if (!x->any || e->ts <= a->window.start) {
			x->first = e->v.value;
		}
		x->last = e->v.value;
		x->any = true;
	}
	double ratio = isc_thr(&a->th, ISC_THR_STARVED_RATIO);
	/* Starved by its own threads: more of them runnable than there are cores. A run-queue
	 * wait that other processes on the machine cause is theirs, not this program's. */
	int cores = 0, busy = 0;
	for (size_t i = 0; i < t->n_inputs; i++) {
		cores = t->inputs[i].cpu_count > cores ? t->inputs[i].cpu_count : cores;
	}
	double w0 = (double)(a->window.end - a->window.start);
	for (size_t k = 0; k < nt; k++) {
		/* runnable: running or waiting for a CPU */
		double run =
			(g[2 * k].last - g[2 * k].first) + (g[2 * k + 1].last - g[2 * k + 1].first);
		busy += run * 1000.0 >= 0.1 * w0;
	}
	for (size_t k = 0; (cores == 0 || busy > cores) && k < nt; k++) {
		const struct growth *cpu = &g[2 * k], *rq = &g[2 * k + 1];
		int64_t rq_ns = (int64_t)((rq->last - rq->first) * 1000.0);
		int64_t cpu_ns = (int64_t)((cpu->last - cpu->first) * 1000.0);
		if (!c->path_thread[k].on_path || !rq->any || rq_ns <= 0 ||
		    (double)rq_ns < ratio * (double)cpu_ns || rq_ns <= v->rq_ns) {
			continue;
		}
		v->rq_thread = (uint32_t)k;
		v->rq_ns = rq_ns;
		v->cpu_ns = cpu_ns;
	}
	double w = (double)(a->window.end - a->window.start);
	gain = v->rq_thread != UINT32_MAX && w > 0 ? fmin(50.0, 50.0 * (double)v->rq_ns / w) : 0;
out:
	free(g);
	return gain;
}

static const char *thread_label(const struct isc_trace *t, uint32_t k, char *buf, size_t n)
{
	const struct isc_thread_info *th = &t->threads[k];
	if (th->name != 0) {
		snprintf(buf, n, "%s (%lld)", isc_trace_str(t, th->name), (long long)th->tid);
	} else {
		snprintf(buf, n, "%lld", (long long)th->tid);
	}
	return buf;
}

/* The calls of one kind on the critical path, by their time on it, as "a 1.2 s, b 3 ms". */
static void path_calls(const struct vctx *v,
		       double (*pick)(const struct isc_trace *, const struct isc_ev *,
				      const void *),
		       char *out, size_t n)
{
	const struct isc_causal *c = v->a->causal;
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; i < ISC_CP_TOP && c->top[i].ns > 0; i++) {
		if (c->top[i].kind != ISC_CPK_CALL) {
			continue;
		}
		/* A node of that name tells whether the lever picks such calls. */
		const char *nm = isc_trace_str(v->t, c->top[i].name);
		bool picked = false;
		for (size_t j = 0; j < c->host_nodes && !picked; j++) {
			const struct isc_ev *e = &v->t->ev[c->node[j].ev];
			picked = e->name == c->top[i].name && pick(v->t, e, v) >= 0;
		}
		if (!picked || len + 2 >= n) {
			continue;
		}
		char b[ISC_FMT_LEN];
		len += (size_t)snprintf(out + len, n - len, "%s%s %s", len ? ", " : "", nm,
					isc_fmt_dur(b, (double)c->top[i].ns));
		len = len < n ? len : n - 1;
	}
}

/* The waits for a child in the graph, by name, as "wait4 (2 calls, 1.2 s)". */
static void child_calls(const struct vctx *v, char *out, size_t n)
{
	const struct isc_causal *c = v->a->causal;
	struct {
		uint32_t name;
		uint64_t calls;
		int64_t ns;
	} by[4] = { { 0, 0, 0 } };
	size_t m = 0, len = 0;
	for (size_t i = 0; i < c->host_nodes; i++) {
		const struct isc_gnode *g = &c->node[i];
		uint32_t name = v->t->ev[g->ev].name;
		size_t k = 0;
		while (k < m && by[k].name != name) {
			k++;
		}
		if (!(g->flags & ISC_GN_CHILD) || k == sizeof(by) / sizeof(by[0])) {
			continue;
		}
		m += k == m;
		by[k].name = name;
		by[k].calls += (g->flags & ISC_GN_LAST) != 0;
		by[k].ns += g->t1 - isc_gn_t0(c, g);
	}
	snprintf(out, n, "wait calls");
	for (size_t k = 0; k < m && len + 2 < n; k++) {
		char b[ISC_FMT_LEN];
		len += (size_t)snprintf(
			out + len, n - len, "%s%s (%llu call%s, %s)", k ? ", " : "",
			isc_trace_str(v->t, by[k].name), (unsigned long long)by[k].calls,
			by[k].calls == 1 ? "" : "s", isc_fmt_dur(b, (double)by[k].ns));
		len = len < n ? len : n - 1;
	}
}

/* The threads whose host code is on the path, by their time on it. */
static void path_threads(const struct vctx *v, char *out, size_t n)
{
	const struct isc_trace *t = v->t;
	const struct isc_causal *c = v->a->causal;
	int64_t *by = calloc(t->n_threads + 1, sizeof(*by));
	out[0] = '\0';
	if (by == NULL) {
		return;
	}
	for (size_t k = 0; k < t->n_threads; k++) {
		by[k] = c->path_thread[k].host_ns;
	}
	size_t len = 0;
	for (int k = 0; k < 3; k++) {
		size_t best = t->n_threads;
		for (size_t j = 0; j < t->n_threads; j++) {
			best = by[j] > 0 && (best == t->n_threads || by[j] > by[best]) ? j : best;
		}
		if (best == t->n_threads || len + 2 >= n) {
			break;
		}
		char b1[ISC_FMT_LEN], lb[96];
		len += (size_t)snprintf(out + len, n - len, "%s%s %s", len ? ", " : "",
					thread_label(t, (uint32_t)best, lb, sizeof(lb)),
					isc_fmt_pct(b1, (double)by[best] / (double)c->path_ns));
		len = len < n ? len : n - 1;
		by[best] = 0;
	}
	free(by);
}

static void path_evidence(const struct vctx *v)
{
	const struct isc_causal *c = v->a->causal;
	struct isc_verdict *vd = &v->a->verdict;
	char b[9][ISC_FMT_LEN];
	double p = (double)c->path_ns;
	if (v->gpu) {
		isc_verdict_evidence(
			vd,
			"critical path %s: GPU work %s, copies %s, host side %s (host computing "
			"%s, CUDA calls %s, sync returns and blocked calls %s), launch latency "
			"%s, untraced %s",
			isc_fmt_dur(b[0], p), isc_fmt_pct(b[1], (double)isc_cp_gpu(c) / p),
			isc_fmt_pct(b[2], (double)isc_cp_copies(c) / p),
			isc_fmt_pct(b[3], (double)isc_cp_host(c) / p),
			isc_fmt_pct(b[4], (double)c->cat[ISC_CP_HOST] / p),
			isc_fmt_pct(b[5], (double)c->cat[ISC_CP_RUNTIME] / p),
			isc_fmt_pct(b[6],
				    (double)(c->cat[ISC_CP_SYNC] + c->cat[ISC_CP_BLOCKED]) / p),
			isc_fmt_pct(b[7], (double)c->cat[ISC_CP_LAUNCH] / p),
			isc_fmt_pct(b[8], (double)c->cat[ISC_CP_UNTRACED] / p));
		int64_t waits = c->cat[ISC_CP_STREAM_WAIT] + c->cat[ISC_CP_COMM_WAIT];
		if (c->cat[ISC_CP_GPU_GAP] + waits > 0) {
			isc_verdict_evidence(
				vd,
				"critical path on the GPU side: stream gaps %s, waits on "
				"other streams and communication %s",
				isc_fmt_pct(b[0], (double)c->cat[ISC_CP_GPU_GAP] / p),
				isc_fmt_pct(b[1], (double)waits / p));
		}
	} else {
		isc_verdict_evidence(
			vd,
			"critical path %s: host computing %s, I/O calls %s, waits "
			"(locks, polls, sleeps) %s, other calls %s, untraced %s",
			isc_fmt_dur(b[0], p), isc_fmt_pct(b[1], (double)c->cat[ISC_CP_HOST] / p),
			isc_fmt_pct(b[2], (double)c->cat[ISC_CP_IO] / p),
			isc_fmt_pct(b[3], (double)c->cat[ISC_CP_HOST_WAIT] / p),
			isc_fmt_pct(b[4],
				    (double)(c->cat[ISC_CP_RUNTIME] + c->cat[ISC_CP_BLOCKED]) / p),
			isc_fmt_pct(b[5], (double)c->cat[ISC_CP_UNTRACED] / p));
	}
	if (c->top[0].ns > 0) {
		isc_verdict_evidence(vd, "longest on the critical path: %s '%s' %s",
				     isc_cp_kind_name((enum isc_cp_kind)c->top[0].kind),
				     isc_trace_str(v->t, c->top[0].name),
				     isc_fmt_dur(b[0], (double)c->top[0].ns));
	}
	if (c->queue_full > 0) {
		isc_verdict_evidence(
			vd,
			"%llu launches waited for a slot of a full launch queue (up to %lld "
			"operations in flight): the host is blocked, not computing",
			(unsigned long long)c->queue_full, (long long)c->max_queue_depth);
	}
}

/* Every lever's gain, largest first, by its id (docs/rules.md); those that gain nothing
 * are named together. */
static void gains_evidence(const struct vctx *v)
{
	struct isc_verdict *vd = &v->a->verdict;
	char line[ISC_LINE];
	size_t len = 0;
	bool shown[ISC_MAX_LEVERS] = { false };
	for (int k = 0; k < vd->n_levers; k++) {
		int best = -1;
		for (int i = 0; i < vd->n_levers; i++) {
			best = !shown[i] && (best < 0 ||
					     vd->levers[i].gain_pct > vd->levers[best].gain_pct)
				       ? i
				       : best;
		}
		if (best < 0 || vd->levers[best].gain_pct < 0.05 || len + 2 >= sizeof(line)) {
			break;
		}
		shown[best] = true;
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %.1f %%",
					len ? ", " : "", vd->levers[best].id,
					vd->levers[best].gain_pct);
		len = len < sizeof(line) ? len : sizeof(line) - 1;
	}
	isc_verdict_evidence(vd, "what-ifs, each lever twice as fast (gain, of the window): %s%s",
			     len > 0 ? line : "none gains", len > 0 ? "; the others nothing" : "");
}

/* The line that says why the verdict is what it is, with its numbers. */
static void deciding_evidence(const struct vctx *v, const struct lever *l, double gain)
{
	const struct isc_trace *t = v->t;
	struct isc_verdict *vd = &v->a->verdict;
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN], list[192], lb[96];
	isc_verdict_evidence(vd, "making %s twice as fast ends the window %.1f %% earlier", l->what,
			     gain);
	if (l->pick == pick_host_code) {
		path_threads(v, list, sizeof(list));
		if (list[0] != '\0') {
			isc_verdict_evidence(vd, "host code on the critical path runs in %s", list);
		}
	} else if (l->pick == NULL) {
		int cores = 0;
		for (size_t i = 0; i < t->n_inputs; i++) {
			cores = t->inputs[i].cpu_count > cores ? t->inputs[i].cpu_count : cores;
		}
		char nc[32] = "";
		if (cores > 0) {
			snprintf(nc, sizeof(nc), " on %d CPUs", cores);
		}
		isc_verdict_evidence(
			vd,
			"thread %s waited %s on a run queue against %s of CPU time in the %s "
			"window%s: more threads want to run than there are cores",
			thread_label(t, v->rq_thread, lb, sizeof(lb)),
			isc_fmt_dur(b1, (double)v->rq_ns), isc_fmt_dur(b2, (double)v->cpu_ns),
			isc_fmt_dur(b3, (double)(v->a->window.end - v->a->window.start)), nc);
	} else if (l->pick == pick_child) {
		child_calls(v, list, sizeof(list));
		if (v->child != UINT16_MAX) {
			/* its command on one line (a `python3 -c` script has several), cut */
			const struct isc_input *in = &t->inputs[v->child];
			const char *cmd = in->command != 0 ? isc_trace_str(t, in->command) : "?";
			char one[64];
			size_t n_one = isc_esc_ctrl(one, sizeof(one), cmd, ' ');
			isc_verdict_evidence(vd,
					     "the window waits for child process %lld (%s%s) in "
					     "%s; its trace: %s",
					     (long long)in->pid, one,
					     n_one < strlen(cmd) ? "..." : "", list,
					     in->path != NULL ? in->path : "?");
		} else {
			isc_verdict_evidence(
				vd,
				"the window waits for a child process in %s; no child's trace is "
				"in this analysis (a traced child writes its own, STEM.PID.json "
				"beside its parent's: analyse them together to see its work)",
				list);
		}
	} else if (l->pick == pick_io || l->pick == pick_locks || l->pick == pick_input ||
		   l->pick == pick_sleep) {
		path_calls(v, l->pick, list, sizeof(list));
		if (list[0] != '\0') {
			isc_verdict_evidence(vd, "the critical path waits in %s", list);
		}
	}
}

/* A stream runs its operations one after another: no host-side change ends the run before
 * the busiest stream's work, so a host lever gains at most that stream's idle share. */
static double busiest_stream_idle(const struct isc_analysis *a)
{
	int64_t busy = a->n_streams > 0 ? 0 : a->gpu_busy_ns;
	for (size_t i = 0; i < a->n_streams; i++) {
		busy = a->streams[i].busy > busy ? a->streams[i].busy : busy;
	}
	return 100.0 * (1.0 - isc_share(a, busy));
}

static void set_verdict(struct vctx *v, enum isc_bound b, const char *cause)
{
	v->a->verdict.type = b;
	snprintf(v->a->verdict.cause, sizeof(v->a->verdict.cause), "%s", cause);
}

bool isc_verdict_from_path(const struct isc_trace *t, struct isc_analysis *a, double *margin)
{
	const struct isc_causal *c = a->causal;
	if (c == NULL || c->n == 0 || c->path_ns <= 0) {
		return false;
	}
	size_t ns = isc_trace_n_strings(t);
	struct vctx v = { .t = t, .a = a, .gpu = isc_has_gpu_work(a) };
	v.comm = calloc(ns + 1, sizeof(*v.comm));
	v.call = calloc(ns + 1, sizeof(*v.call));
	v.root = calloc(t->n_inputs + 1, sizeof(*v.root));
	if (v.comm == NULL || v.call == NULL || v.root == NULL) {
		free(v.comm);
		free(v.call);
		free(v.root);
		return false;
	}
	for (size_t i = 0; i < ns; i++) {
		const char *n = isc_trace_str(t, (uint32_t)i);
		v.comm[i] = strstr(n, "nccl") != NULL || strstr(n, "gloo") != NULL;
		v.call[i] = (uint8_t)isc_wait_kind_of(n);
	}
	processes(&v);
	for (size_t i = 0; i < a->causal->n && !v.waits_child; i++) {
		const struct isc_ev *e = &t->ev[a->causal->node[i].ev];
		v.waits_child = e->type == ISC_T_SYSCALL && v.call[e->name] == CALL_CHILD;
	}
	struct isc_verdict *vd = &a->verdict;
	double gain[N_LEVERS] = { 0 };
	int64_t picked[N_LEVERS] = { 0 };
	uint16_t child_best = UINT16_MAX;
	plain_gains(&v, picked, gain);
	for (size_t i = 0; i < N_LEVERS; i++) {
		const struct lever *l = &levers[i];
		if (l->needs_gpu && !v.gpu) {
			continue;
		}
		if (l->pick == NULL) {
			gain[i] = run_queue_gain(&v);
		} else if (l->pick == pick_child) {
			/* Only where the window waits for a child (a wait call: a child that
			 * merely exists is judged by the other levers), with one child's work
			 * at a time: the one that gains the most. */
			v.child = UINT16_MAX;
			if ((picked[i] = picked_ns(&v, l)) > 0) {
				gain[i] = gain_of(&v, l, NULL);
			}
			for (size_t k = 0; picked[i] > 0 && k < t->n_inputs; k++) {
				v.child = (uint16_t)k;
				double g = !v.root[k] ? gain_of(&v, l, NULL) : 0;
				child_best = g > gain[i] ? (uint16_t)k : child_best;
				gain[i] = g > gain[i] ? g : gain[i];
			}
			v.child = child_best;
		}
		vd->levers[vd->n_levers++] =
			(struct isc_lever_gain){ l->id, l->what,
						 v.gpu ? l->gpu_bound : l->host_bound,
						 l->side == SIDE_HOST, gain[i] };
	}
	size_t best = 0, second = N_LEVERS;
	for (size_t i = 1; i < N_LEVERS; i++) {
		best = gain[i] > gain[best] ? i : best;
	}
	const struct lever *lb = &levers[best];
	enum isc_bound bb = v.gpu ? lb->gpu_bound : lb->host_bound;
	for (size_t i = 0; i < N_LEVERS; i++) {
		enum isc_bound bi = v.gpu ? levers[i].gpu_bound : levers[i].host_bound;
		if (i != best && bi != bb && (second == N_LEVERS || gain[i] > gain[second])) {
			second = i;
		}
	}
	double g1 = gain[best], g2 = second < N_LEVERS ? gain[second] : 0;
	double min_gain = isc_thr(&a->th, ISC_THR_MIN_GAIN_PCT);
	double ratio = isc_thr(&a->th, ISC_THR_BALANCE_RATIO);
	/* With GPU work: the best lever of the other side (by gain, then by time: in a
	 * pipeline no lever gains alone), together with the best one. */
	size_t other = N_LEVERS;
	for (size_t i = 0; v.gpu && i < N_LEVERS; i++) {
		if (levers[i].side != lb->side && levers[i].pick != NULL &&
		    levers[i].pick != pick_child && picked[i] > 0 &&
		    (other == N_LEVERS || gain[i] > gain[other] ||
		     (gain[i] == gain[other] && picked[i] > picked[other]))) {
			other = i;
		}
	}
	double joint = other < N_LEVERS && picked[best] > 0 ? gain_of(&v, lb, &levers[other]) : 0;
	vd->pipeline_pct = joint;
	vd->gpu_idle_pct = v.gpu ? busiest_stream_idle(a) : 100.0;
	vd->gain_pct = g1;
	char b1[ISC_FMT_LEN];
	if (g1 >= min_gain && second < N_LEVERS && g2 >= ratio * g1) {
		char cause[64];
		snprintf(cause, sizeof(cause), "%s_and_%s", lb->id, levers[second].id);
		set_verdict(&v, ISC_BOUND_BALANCED, cause);
		*margin = 0.25 * (g2 / g1 - ratio) / (1.0 - ratio > 0 ? 1.0 - ratio : 1);
		isc_verdict_evidence(vd,
				     "%s (%.1f %%) and %s (%.1f %%) gain comparably: neither "
				     "dominates",
				     lb->what, g1, levers[second].what, g2);
	} else if (joint >= min_gain && g1 < (1.0 - ratio) * joint) {
		/* Neither side gains much alone, both together do: each waits for the other. */
		set_verdict(&v, ISC_BOUND_BALANCED, "overlapped_pipeline");
		*margin = 0.25 * (joint - min_gain) / (joint > 0 ? joint : 1);
		isc_verdict_evidence(vd,
				     "%s and %s both twice as fast gain %.1f %%, either alone at "
				     "most %.1f %%: the two overlap (a pipeline)",
				     lb->what, levers[other].what, joint, g1);
	} else if (g1 < min_gain) {
		/* Nothing here gains: the run waits, for its input if that lever leads. */
		bool waits = picked[best] > 0 &&
			     (v.gpu ? lb->gpu_bound : lb->host_bound) == ISC_BOUND_IDLE;
		/* A path through stream gaps that no recorded event explains is not the
		 * host's untraced time: said apart. */
		bool gaps = !waits && c->cat[ISC_CP_GPU_GAP] > c->cat[ISC_CP_UNTRACED];
		set_verdict(&v, ISC_BOUND_IDLE,
			    waits  ? lb->host_cause
			    : gaps ? "gpu_stream_gaps"
				   : "untraced");
		vd->gain_pct = 0;
		*margin = 0.25 * (min_gain - g1) / (min_gain > 0 ? min_gain : 1);
		if (waits) {
			isc_verdict_evidence(vd, "no lever gains %s of the window: the run waits",
					     isc_fmt_pct(b1, min_gain / 100.0));
			deciding_evidence(&v, lb, g1);
		} else if (gaps) {
			char b2[ISC_FMT_LEN];
			isc_verdict_evidence(vd,
					     "no lever gains %s of the window: the critical path "
					     "runs through GPU stream gaps (%s of it) that no "
					     "recorded event explains",
					     isc_fmt_pct(b1, min_gain / 100.0),
					     isc_fmt_pct(b2, (double)c->cat[ISC_CP_GPU_GAP] /
								     (double)c->path_ns));
		} else {
			isc_verdict_evidence(vd,
					     "no lever gains %s of the window: the run waits on "
					     "what no hook saw, or on nothing",
					     isc_fmt_pct(b1, min_gain / 100.0));
		}
	} else {
		set_verdict(&v, bb, v.gpu ? lb->gpu_cause : lb->host_cause);
		if (lb->pick == pick_copies) {
			set_verdict(&v, bb,
				    c->cat[ISC_CP_H2D] >= c->cat[ISC_CP_D2H] ? "h2d_copy"
									     : "d2h_copy");
		}
		*margin = 0.5 * (1.0 - g2 / g1);
		deciding_evidence(&v, lb, g1);
	}
	gains_evidence(&v);
	path_evidence(&v);
	free(v.comm);
	free(v.call);
	free(v.root);
	return true;
}

double isc_path_penalties(struct isc_analysis *a)
{
	const struct isc_causal *c = a->causal;
	struct isc_verdict *v = &a->verdict;
	double f = 1.0;
	if (c == NULL || c->n == 0) {
		return f;
	}
	if (c->kineto && c->gpu_nodes > 0) {
		f *= 0.85;
		isc_verdict_evidence(
			v, "a Kineto input records no waits: blocked calls are told from launch "
			   "queue depth and GPU timing only (confidence lowered)");
	}
	if (c->gpu_nodes > 0 && c->unknown_device_ops * 2 > c->gpu_nodes) {
		f *= 0.8;
		isc_verdict_evidence(v, "most GPU operations name no device (confidence lowered)");
	}
	return f;
}
