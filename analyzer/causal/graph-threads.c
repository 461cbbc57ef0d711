/* SPDX-License-Identifier: MIT */
/*
 * Host threads among each other (graph.h, docs/rules.md "Threads"): which threads only
 * poll or tick, which work only in the exit's teardown, and the hand-offs of work from
 * one thread to another.
 *
 * A poller (PyTorch's NCCL watchdog: one cudaEventQuery every 100 ms; a heartbeat) makes
 * calls (CUDA calls, syscalls; no scope nor operator) at a steady period, or only after
 * timed waits that ended by their timeout (a driver thread's ioctl every 4 s), launches no GPU
 * work and is busy a small share of the time it spans. It is not the program's work: its segments never end the run, so a
 * poll made after the last step does not become the critical path.
 *
 * Nothing in a trace names the thread that ended a wait: the preload records the waits
 * (pthread_mutex_lock, pthread_cond_wait, sem_wait, futex; timed waits may end by their
 * timeout and are left alone) but not the unlock, signal
 * or post, and Kineto records neither. A hand-off is inferred from times alone:
 *  - a wait (such a call, or a scope's self time while another thread works: autograd's
 *    `## backward ##`, the step of a program whose backward pass runs on the autograd
 *    thread) ends at most HANDOFF_NS (and a quarter of its length) after a segment of
 *    another thread ended inside it: that segment released it (the last one to end). A
 *    scope's self time counts only when the releasing thread worked for at least half
 *    of it (its recorded segments from the wait's start to the release, its own waits
 *    left out: a thread blocked in a synchronize fills no one's time).
 *  - a Kineto input names the thread a scope waits for where it has `fwdbwd` flows (a
 *    forward operator to its backward operator): a scope's or operator's self time on
 *    the forward's thread while a backward operator of that thread's forward starts on
 *    another thread (autograd's engine thread) waits for that thread, whatever share of
 *    the time it worked (it may itself wait for the GPU): its release is that thread's
 *    last segment to end inside it, within the same tolerance.
 *  - the releasing thread's run of work that ends in the release, when the thread sat
 *    idle (no recorded event, no recorded wait) from before the wait began, was started
 *    by the waiting thread: its first segment depends on the waiting thread's segment
 *    that ended last before it (the call that handed the work over).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/sort.h"
#include "analyzer/causal/graph.h"

#define POLL_MIN_CALLS 4  /* bursts of calls a poller makes in the window, at least */
#define HANDOFF_NS 150000 /* a release ends at most this long before the wait ends */

static uint32_t thread_of(const struct isc_trace *t, const struct isc_causal *c, size_t i)
{
	return t->ev[c->node[i].ev].thread;
}

/* busy + the time node g works (none while it waits), at most INT64_MAX: a corrupt
 * input's overlapping segments add up past it. */
static int64_t add_work(int64_t busy, const struct isc_causal *c, const struct isc_gnode *g)
{
	int64_t s;
	int64_t w = (g->flags & ISC_GN_WAITING) ? 0 : g->t1 - isc_gn_t0(c, g);
	return __builtin_add_overflow(busy, w, &s) ? INT64_MAX : s;
}

/* Whether the starts of a thread's bursts of calls (v, n of them) are a steady period:
 * three quarters of the intervals within half and twice their median. v is reordered. */
static bool periodic(int64_t *v, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		v[i] = v[i + 1] - v[i];
	}
	n--;
	int64_t m = isc_graph_kth(v, n, n / 2);
	size_t in = 0;
	for (size_t i = 0; i < n; i++) {
		in += v[i] >= m - v[i] && v[i] - m <= m; /* no 2 * v: times reach 2^61 */
	}
	return m > 0 && 4 * in >= 3 * n;
}

/* Whether the clock alone wakes the thread of nodes s..e: after its first burst it works,
 * and every segment it works follows a timed wait that ended by its timeout (a wait
 * another thread ended hands the thread work). A thread that only waits is no ticker. */
static bool ticks(const struct isc_trace *t, const struct isc_causal *c, size_t s, size_t e)
{
	bool started = false, by_clock = false, timeouts = false, works = false;
	for (size_t i = s; i < e; i++) {
		const struct isc_gnode *g = &c->node[i];
		if (g->flags & ISC_GN_WAITING) {
			by_clock = (t->ev[g->ev].flags & ISC_F_TIMEDOUT) != 0;
			timeouts |= by_clock;
			started |= i > s;
		} else if (started && !by_clock) {
			return false;
		} else {
			works |= started;
		}
	}
	return timeouts && works;
}

/* Marks the segments of threads that only poll or tick ISC_GN_POLL. */
static int pollers(const struct isc_trace *t, struct isc_causal *c)
{
	bool *launches = calloc(t->n_threads + 1, sizeof(*launches));
	int64_t *starts = malloc((c->host_nodes + 1) * sizeof(*starts));
	if (launches == NULL || starts == NULL) {
		free(launches);
		free(starts);
		return -ENOMEM;
	}
	for (size_t i = c->host_nodes; i < c->n; i++) {
		if (c->node[i].dep != ISC_GN_NONE) {
			launches[thread_of(t, c, c->node[i].dep)] = true;
		}
	}
	/* The busiest thread is the program's, whatever its rhythm. */
	int64_t top = -1;
	size_t top_s = 0;
	for (size_t s = 0, e; s < c->host_nodes; s = e) {
		int64_t busy = 0;
		for (e = s; e < c->host_nodes && thread_of(t, c, e) == thread_of(t, c, s); e++) {
			busy = add_work(busy, c, &c->node[e]);
		}
		if (busy > top) {
			top = busy;
			top_s = s;
		}
	}
	for (size_t s = 0, e; s < c->host_nodes; s = e) {
		uint32_t th = thread_of(t, c, s);
		int64_t busy = 0;
		size_t nb = 0;
		bool calls = true;
		for (e = s; e < c->host_nodes && thread_of(t, c, e) == th; e++) {
			const struct isc_gnode *g = &c->node[e];
			uint8_t ty = t->ev[g->ev].type;
			busy = add_work(busy, c, g);
			calls &= ty == ISC_T_CUDA_API || ty == ISC_T_SYSCALL;
			if (e == s || isc_gn_t0(c, g) > c->node[e - 1].t1) {
				starts[nb++] = isc_gn_t0(c, g);
			}
		}
		int64_t span = c->node[e - 1].t1 - isc_gn_t0(c, &c->node[s]);
		if (s == top_s || launches[th] || !calls || busy > span / 10 ||
		    (!ticks(t, c, s, e) && (nb < POLL_MIN_CALLS || !periodic(starts, nb)))) {
			continue;
		}
		for (size_t i = s; i < e; i++) {
			c->node[i].flags |= ISC_GN_POLL;
		}
		if (c->n_pollers < sizeof(c->poller) / sizeof(c->poller[0])) {
			c->poller[c->n_pollers] = th;
		}
		c->n_pollers++;
	}
	free(launches);
	free(starts);
	return 0;
}

/*
 * Marks ISC_GN_TEARDOWN the segments of a thread that sat in a wait when its process's main
 * thread (tid == pid) ended its last recorded segment (CPU samples aside: the exit's own
 * handlers are sampled), and that start after it: the exit
 * woke that thread (the CUDA runtime's atexit teardown posts the semaphore its helper
 * thread waited on since the first CUDA call, and the helper then makes its last driver
 * calls). Such work is not where the run ends. A thread that works on past the main
 * thread's end without having waited for it (a program whose main thread left with
 * pthread_exit) is left alone, as is every thread of an input whose main thread has no
 * recorded segment.
 */
static int teardown(const struct isc_trace *t, struct isc_causal *c)
{
	int64_t *main_end = malloc((t->n_inputs + 1) * sizeof(*main_end));
	if (main_end == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k <= t->n_inputs; k++) {
		main_end[k] = INT64_MIN;
	}
	for (size_t i = 0; i < c->host_nodes; i++) {
		const struct isc_thread_info *th = &t->threads[thread_of(t, c, i)];
		if (th->input < t->n_inputs && th->tid == t->inputs[th->input].pid &&
		    t->ev[c->node[i].ev].type != ISC_T_CPU_SAMPLE &&
		    c->node[i].t1 > main_end[th->input]) {
			main_end[th->input] = c->node[i].t1;
		}
	}
	for (size_t s = 0, e; s < c->host_nodes; s = e) {
		const struct isc_thread_info *th = &t->threads[thread_of(t, c, s)];
		for (e = s; e < c->host_nodes && thread_of(t, c, e) == thread_of(t, c, s); e++) {
		}
		int64_t m = th->input < t->n_inputs ? main_end[th->input] : INT64_MIN;
		bool woken = false;
		for (size_t i = s; i < e && m != INT64_MIN; i++) {
			struct isc_gnode *g = &c->node[i];
			int64_t t0 = isc_gn_t0(c, g);
			woken |= (g->flags & ISC_GN_IDLE) && t0 < m && g->t1 > m;
			if (woken && t0 >= m) {
				g->flags |= ISC_GN_TEARDOWN;
			}
		}
	}
	free(main_end);
	return 0;
}

/* A wait call of the pthreads or the kernel's futex that only another thread ends: not
 * poll/select (their fds are written from outside the process as often as not), nor a
 * timed wait (pthread_cond_timedwait, sem_clockwait...: it may end by its timeout). */
static bool thread_wait(const struct isc_trace *t, const struct isc_ev *e)
{
	if (e->type != ISC_T_SYSCALL || e->sub != ISC_SYS_WAIT) {
		return false;
	}
	const char *n = isc_trace_str(t, e->name);
	return (strncmp(n, "pthread_", 8) == 0 || strncmp(n, "sem_", 4) == 0 ||
		strncmp(n, "futex", 5) == 0) &&
	       strstr(n, "timed") == NULL && strstr(n, "clock") == NULL;
}

/* Work of node x's thread from s to x's end: recorded segments, waits left out. */
static int64_t worked(const struct isc_causal *c, uint32_t x, int64_t s)
{
	const uint16_t waits = ISC_GN_WAITING | ISC_GN_WAIT | ISC_GN_BLOCKING | ISC_GN_HANDOFF;
	int64_t sum = 0;
	for (; x != ISC_GN_NONE && c->node[x].t1 > s; x = c->node[x].seq) {
		const struct isc_gnode *g = &c->node[x];
		if (!(g->flags & waits)) {
			sum += g->t1 - (isc_gn_t0(c, g) > s ? isc_gn_t0(c, g) : s);
		}
	}
	return sum;
}

/* The releasing thread's run that ended in x began after the wait at s began, the thread
 * idle before it: its first segment waits for the waiting thread's (from h back). */
static void wake(struct isc_causal *c, uint32_t x, uint32_t h, int64_t s)
{
	uint32_t w = x;
	while (c->node[w].seq != ISC_GN_NONE && isc_gn_t0(c, &c->node[c->node[w].seq]) >= s &&
	       !(c->node[c->node[w].seq].flags & ISC_GN_WAITING)) {
		w = c->node[w].seq;
	}
	struct isc_gnode *g = &c->node[w];
	uint32_t p = g->seq;
	if (isc_gn_t0(c, g) < s || g->dep != ISC_GN_NONE ||
	    (p != ISC_GN_NONE && ((c->node[p].flags & ISC_GN_WAITING) || c->node[p].t1 >= s))) {
		return;
	}
	while (h != ISC_GN_NONE && c->node[h].t1 > isc_gn_t0(c, g)) {
		h = c->node[h].seq;
	}
	if (h == ISC_GN_NONE || (p != ISC_GN_NONE && c->node[h].t1 <= c->node[p].t1) ||
	    c->node[h].t1 >= g->t1) {
		return;
	}
	g->dep = h;
	g->flags |= ISC_GN_WOKEN;
	c->wakes++;
}

/* A backward operator that another thread ran for a forward of thread fwd (a Kineto
 * fwdbwd flow across threads): the backward's start and thread. */
struct backward {
	uint32_t fwd, bwd;
	int64_t ts;
};

static int backward_cmp(const void *x, const void *y)
{
	const struct backward *a = x, *b = y;
	if (a->fwd != b->fwd) {
		return a->fwd < b->fwd ? -1 : 1;
	}
	if (a->ts != b->ts) {
		return a->ts < b->ts ? -1 : 1;
	}
	return a->bwd < b->bwd ? -1 : a->bwd > b->bwd ? 1 : 0;
}

/* The fwdbwd flows between two threads, by forward thread and backward start; *n of them
 * (none: NULL). 0 or -ENOMEM. */
static int backwards(const struct isc_trace *t, struct backward **out, size_t *n)
{
	size_t k = 0;
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < t->n_flows; i++) {
		const struct isc_flow *f = &t->flows[i];
		k += f->kind == ISC_FLOW_FWDBWD && t->ev[f->src].thread != t->ev[f->dst].thread;
	}
	if (k == 0) {
		return 0;
	}
	struct backward *v = malloc(k * sizeof(*v));
	if (v == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n_flows; i++) {
		const struct isc_flow *f = &t->flows[i];
		const struct isc_ev *s = &t->ev[f->src], *d = &t->ev[f->dst];
		if (f->kind == ISC_FLOW_FWDBWD && s->thread != d->thread) {
			v[(*n)++] = (struct backward){ s->thread, d->thread, d->ts };
		}
	}
	isc_qsort(v, *n, sizeof(*v), backward_cmp);
	*out = v;
	return 0;
}

/* The thread that ran the last backward operator of thread th's forward starting in
 * [s, e), UINT32_MAX when none did. */
static uint32_t backward_thread(const struct backward *v, size_t n, uint32_t th, int64_t s,
				int64_t e)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].fwd < th || (v[mid].fwd == th && v[mid].ts < e)) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo > 0 && v[lo - 1].fwd == th && v[lo - 1].ts >= s ? v[lo - 1].bwd : UINT32_MAX;
}

static void handoff(const struct isc_trace *t, struct isc_causal *c, const uint32_t *by_end,
		    size_t m, const struct backward *bw, size_t n_bw, uint32_t i)
{
	struct isc_gnode *g = &c->node[i];
	const struct isc_ev *o = &t->ev[g->ev];
	bool wait = (g->flags & ISC_GN_IDLE) && thread_wait(t, o);
	bool self =
		(o->type == ISC_T_SCOPE || o->type == ISC_T_CPU_OP) && !(g->flags & ISC_GN_IDLE);
	int64_t len = g->t1 - isc_gn_t0(c, g);
	if ((!wait && !self) || g->dep != ISC_GN_NONE || (g->flags & ISC_GN_POLL) || len <= 0) {
		return;
	}
	int64_t tol = wait || len / 4 > HANDOFF_NS ? HANDOFF_NS : len / 4;
	/* the last segment of another thread to end inside it, within tol of its end */
	size_t lo = 0, hi = m;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->node[by_end[mid]].t1 < g->t1) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	uint32_t th = o->thread, x = ISC_GN_NONE;
	uint32_t by = self ? backward_thread(bw, n_bw, th, isc_gn_t0(c, g), g->t1) : UINT32_MAX;
	for (size_t k = lo; k-- > 0;) {
		const struct isc_gnode *r = &c->node[by_end[k]];
		uint32_t rt = t->ev[r->ev].thread;
		if (r->t1 < g->t1 - tol || r->t1 <= isc_gn_t0(c, g)) {
			break;
		}
		if (rt != th && (by == UINT32_MAX || rt == by)) {
			x = by_end[k];
			break;
		}
	}
	if (x == ISC_GN_NONE ||
	    (self && by == UINT32_MAX && 2 * worked(c, x, isc_gn_t0(c, g)) < len)) {
		return;
	}
	g->dep = x;
	g->flags |= ISC_GN_HANDOFF;
	c->handoffs++;
	wake(c, x, g->seq, isc_gn_t0(c, g));
}

/* How many threads have work (segments not waiting, not polling): a hand-off needs two. */
static size_t working_threads(const struct isc_trace *t, const struct isc_causal *c)
{
	size_t n = 0;
	for (size_t s = 0, e; s < c->host_nodes && n < 2; s = e) {
		bool works = false;
		for (e = s; e < c->host_nodes && thread_of(t, c, e) == thread_of(t, c, s); e++) {
			works |= !(c->node[e].flags & (ISC_GN_WAITING | ISC_GN_POLL));
		}
		n += works;
	}
	return n;
}

int isc_graph_threads(const struct isc_trace *t, struct isc_causal *c)
{
	int r = pollers(t, c);
	r = r == 0 ? teardown(t, c) : r;
	if (r != 0 || working_threads(t, c) < 2) {
		return r;
	}
	/* The segments that can release a wait, by end. */
	struct backward *bw = NULL;
	size_t n_bw = 0;
	uint32_t *by_end = malloc(c->host_nodes * sizeof(*by_end));
	if (by_end == NULL || backwards(t, &bw, &n_bw) < 0) {
		free(by_end);
		return -ENOMEM;
	}
	size_t m = 0;
	for (size_t i = 0; i < c->host_nodes; i++) {
		if (!(c->node[i].flags & (ISC_GN_WAITING | ISC_GN_POLL))) {
			by_end[m++] = (uint32_t)i;
		}
	}
	if (isc_sort_by_key(&c->node[0].t1, sizeof(struct isc_gnode), by_end, m) < 0) {
		free(by_end);
		free(bw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->host_nodes; i++) {
		handoff(t, c, by_end, m, bw, n_bw, (uint32_t)i);
	}
	free(by_end);
	free(bw);
	return 0;
}
