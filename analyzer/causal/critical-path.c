/* SPDX-License-Identifier: MIT */
/*
 * The critical path of the window: from the node that ends last, walk back through what
 * released each node - the predecessor that ended last (HTA's critical path is the
 * longest path of the same graph; on recorded times the two coincide). A blocking call
 * hands the path to the GPU operation it waited for, so time blocked inside a call is
 * never host computing: it is the GPU work (or the launch delay) it waited on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/causal/graph.h"
#include "analyzer/model/stacks.h"

struct walk {
	const struct isc_trace *t;
	struct isc_causal *c;
	int64_t ws;
	int64_t *by_name; /* ISC_CPK__COUNT rows of n_strings */
	size_t ns;
	size_t cap;
	bool *comm;
	bool keep;	  /* the pieces are kept, else only the one being built */
	int64_t open_end; /* the end of the piece being built (the last one) */
};

/* A finished piece (it ends at e) counts for the thread of its event. */
static void count_piece(struct walk *w, const struct isc_cp_piece *p, int64_t e)
{
	if (p->ev == ISC_GN_NONE || w->t->ev[p->ev].thread >= w->t->n_threads) {
		return;
	}
	struct isc_cp_thread *x = &w->c->path_thread[w->t->ev[p->ev].thread];
	x->on_path |= !p->gpu;
	x->host_ns += p->cat == ISC_CP_HOST ? e - p->s : 0;
}

static int host_cat(const struct walk *w, const struct isc_ev *e)
{
	switch (e->type) {
	case ISC_T_SCOPE:
	case ISC_T_CPU_OP:
		/* a collective run by the host (gloo) or waited for there */
		return w->comm[e->name] ? ISC_CP_COMM_WAIT : ISC_CP_HOST;
	case ISC_T_CUDA_API:
		return ISC_CP_RUNTIME;
	case ISC_T_SYSCALL:
		switch (e->sub) {
		case ISC_SYS_IO:
		case ISC_SYS_NET:
		case ISC_SYS_FS:
			return ISC_CP_IO;
		case ISC_SYS_WAIT:
		case ISC_SYS_SLEEP:
			return ISC_CP_HOST_WAIT;
		case ISC_SYS_DRIVER:
			return ISC_CP_RUNTIME;
		default:
			return ISC_CP_HOST;
		}
	default:
		return ISC_CP_HOST;
	}
}

static int gpu_cat(const struct walk *w, const struct isc_ev *e)
{
	switch (e->type) {
	case ISC_T_KERNEL:
		return w->comm[e->name] ? ISC_CP_COMM : ISC_CP_KERNEL;
	case ISC_T_H2D:
		return ISC_CP_H2D;
	case ISC_T_D2H:
		return ISC_CP_D2H;
	default:
		return ISC_CP_GPU_OTHER;
	}
}

/* The function a CPU sample names (its stack's site), as a string id; 0 when unknown. */
static uint32_t sampled_function(const struct isc_trace *t, const struct isc_ev *x)
{
	struct isc_stack_ref r;
	if (!isc_stack_of(t, x, &r)) {
		return 0;
	}
	int k = isc_stack_site(t, &r, NULL);
	return k >= 0 ? isc_stack_frame(&r, (size_t)k)->function : 0;
}

static int add_piece(struct walk *w, int64_t s, int64_t e, int cat, uint32_t ev, bool gpu)
{
	struct isc_causal *c = w->c;
	s = s > w->ws ? s : w->ws;
	if (e <= s) {
		return 0;
	}
	c->cat[cat] += e - s;
	c->path_ns += e - s;
	if (ev != ISC_GN_NONE) {
		const struct isc_ev *x = &w->t->ev[ev];
		int kind = x->type == ISC_T_CUDA_API || x->type == ISC_T_SYSCALL ? ISC_CPK_CALL
			   : x->type == ISC_T_KERNEL				 ? ISC_CPK_KERNEL
			   : gpu						 ? ISC_CPK_COPY
										 : ISC_CPK_SCOPE;
		uint32_t name = x->name;
		if (x->type == ISC_T_CPU_SAMPLE) {
			uint32_t fn = sampled_function(w->t, x);
			kind = fn != 0 ? ISC_CPK_FUNCTION : kind;
			name = fn != 0 ? fn : name;
		}
		w->by_name[(size_t)kind * w->ns + name] += e - s;
	}
	/* The walk goes backwards and every step starts where the last one ended, so a
	 * piece ends where the last one started (the first: where the path ends); one of
	 * the same category joins it. */
	if (c->n_pieces > 0) {
		struct isc_cp_piece *p = &c->pieces[c->n_pieces - 1];
		if (p->cat == cat) {
			p->s = s;
			p->ev = ev != ISC_GN_NONE ? ev : p->ev;
			return 0;
		}
		count_piece(w, p, w->open_end);
	} else {
		c->path_end = e;
	}
	w->open_end = e;
	if (!w->keep && c->n_pieces > 0) {
		c->pieces[0] = (struct isc_cp_piece){ s, ev, (uint8_t)cat, gpu };
		return 0;
	}
	if (c->n_pieces == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		struct isc_cp_piece *v = realloc(c->pieces, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		c->pieces = v;
		w->cap = cap;
	}
	c->pieces[c->n_pieces++] = (struct isc_cp_piece){ s, ev, (uint8_t)cat, gpu };
	return 0;
}

/* The predecessor that released node v: the one that ended last (stream, launch, the
 * operation an event wait held it for, the thread that handed work over). */
static uint32_t release(const struct isc_causal *c, const struct isc_gnode *v)
{
	uint32_t r = v->seq;
	if ((v->flags & (ISC_GN_GPU | ISC_GN_WOKEN)) && v->dep != ISC_GN_NONE &&
	    (r == ISC_GN_NONE || c->node[v->dep].t1 > c->node[r].t1)) {
		r = v->dep;
	}
	uint32_t x = isc_graph_xdep(c, (uint32_t)(v - c->node));
	if (x != ISC_GN_NONE && (r == ISC_GN_NONE || c->node[x].t1 > c->node[r].t1)) {
		r = x; /* an event wait on another stream held it longest */
	}
	return r;
}

/* What the time between node v and the predecessor p that released it is. On a thread:
 * the hand-off from another thread, or time no event records - host computing only where
 * a CPU sample stands next to it (a sample is the CPU time before it, so a gap that ends
 * in one, or starts after one, had the thread running). On a stream: launch latency, a
 * wait on another stream's operation (or on a communication kernel), or a gap. */
static int gap_cat(const struct walk *w, const struct isc_gnode *v, uint32_t p)
{
	const struct isc_causal *c = w->c;
	const struct isc_gnode *q = &c->node[p];
	if (!(v->flags & ISC_GN_GPU)) {
		if (p == v->dep) {
			return ISC_CP_HOST_WAIT;
		}
		bool sampled =
			w->t->ev[v->ev].type == ISC_T_CPU_SAMPLE ||
			(!(q->flags & ISC_GN_GPU) && w->t->ev[q->ev].type == ISC_T_CPU_SAMPLE);
		return sampled ? ISC_CP_HOST : ISC_CP_UNTRACED;
	}
	if (p == v->dep) {
		return ISC_CP_LAUNCH;
	}
	if (p == isc_graph_xdep(c, (uint32_t)(v - c->node))) {
		const struct isc_ev *x = &w->t->ev[q->ev];
		return x->type == ISC_T_KERNEL && w->comm[x->name] ? ISC_CP_COMM_WAIT
								   : ISC_CP_STREAM_WAIT;
	}
	return ISC_CP_GPU_GAP;
}

static int step(struct walk *w, uint32_t *at, int64_t *cur)
{
	struct isc_causal *c = w->c;
	const struct isc_gnode *v = &c->node[*at];
	bool gpu = (v->flags & ISC_GN_GPU) != 0;
	const struct isc_ev *e = &w->t->ev[v->ev];
	int r;
	if ((v->flags & (ISC_GN_WAIT | ISC_GN_HANDOFF)) && c->node[v->dep].t1 > isc_gn_t0(c, v)) {
		/* Blocked: the path goes to what the call or the thread waited for. */
		int64_t rel = c->node[v->dep].t1 < *cur ? c->node[v->dep].t1 : *cur;
		int cat = (v->flags & ISC_GN_WAIT) ? ISC_CP_SYNC : ISC_CP_HOST_WAIT;
		r = add_piece(w, rel, *cur, cat, v->ev, false);
		*cur = rel;
		*at = v->dep;
		return r;
	}
	int cat = gpu				 ? gpu_cat(w, e)
		  : (v->flags & ISC_GN_BLOCKING) ? ISC_CP_BLOCKED
						 : host_cat(w, e);
	int64_t s = isc_gn_t0(c, v) < *cur ? isc_gn_t0(c, v) : *cur;
	r = add_piece(w, s, *cur, cat, v->ev, gpu);
	c->path_nodes++;
	*cur = s;
	uint32_t p = release(c, v);
	if (p == ISC_GN_NONE || r != 0) {
		*at = ISC_GN_NONE;
		return r;
	}
	int64_t pend = c->node[p].t1 < *cur ? c->node[p].t1 : *cur;
	r = add_piece(w, pend, *cur, gap_cat(w, v, p), ISC_GN_NONE, gpu);
	*cur = pend;
	*at = p;
	return r;
}

static void top_names(struct walk *w)
{
	struct isc_causal *c = w->c;
	memset(c->top, 0, sizeof(c->top));
	for (size_t k = 0; k < ISC_CPK__COUNT; k++) {
		for (size_t i = 1; i < w->ns; i++) {
			int64_t ns = w->by_name[k * w->ns + i];
			if (ns <= 0) {
				continue;
			}
			for (int j = 0; j < ISC_CP_TOP; j++) {
				if (ns > c->top[j].ns) {
					memmove(&c->top[j + 1], &c->top[j],
						sizeof(c->top[0]) * (size_t)(ISC_CP_TOP - j - 1));
					c->top[j] =
						(struct isc_cp_name){ (uint32_t)i, (uint8_t)k, ns };
					break;
				}
			}
		}
	}
}

/* The busiest thread's work (what a pipeline's host side is, blocked calls left out), and
 * the time between its recorded events that no CPU sample accounts for. */
static int host_work(const struct isc_trace *t, struct isc_causal *c)
{
	int64_t *sum = calloc((size_t)c->n_lanes + 1, sizeof(*sum));
	if (sum == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->host_nodes; i++) {
		const struct isc_gnode *n = &c->node[i];
		if (!(n->flags &
		      (ISC_GN_WAIT | ISC_GN_BLOCKING | ISC_GN_WAITING | ISC_GN_HANDOFF))) {
			sum[n->lane] += n->t1 - isc_gn_t0(c, n);
			if (sum[n->lane] > c->host_work) {
				c->host_work = sum[n->lane];
				c->main_lane = n->lane;
			}
		}
	}
	free(sum);
	for (size_t i = 0; i < c->host_nodes; i++) {
		const struct isc_gnode *n = &c->node[i];
		if (n->lane == c->main_lane && n->seq != ISC_GN_NONE &&
		    t->ev[n->ev].type != ISC_T_CPU_SAMPLE &&
		    t->ev[c->node[n->seq].ev].type != ISC_T_CPU_SAMPLE &&
		    isc_gn_t0(c, n) > c->node[n->seq].t1) {
			c->untraced += isc_gn_t0(c, n) - c->node[n->seq].t1;
		}
	}
	return 0;
}

int isc_critical_path(const struct isc_trace *t, const struct isc_analysis *a, struct isc_causal *c)
{
	c->path_thread = calloc(t->n_threads + 1, sizeof(*c->path_thread));
	if (c->path_thread == NULL) {
		return -ENOMEM;
	}
	if (c->n == 0 || host_work(t, c) < 0) {
		return c->n == 0 ? 0 : -ENOMEM;
	}
	struct walk w = { .t = t,
			  .c = c,
			  .ws = a->window.start,
			  .ns = isc_trace_n_strings(t),
			  .keep = !a->no_path_pieces };
	w.by_name = calloc(w.ns * ISC_CPK__COUNT + 1, sizeof(*w.by_name));
	w.comm = calloc(w.ns + 1, sizeof(*w.comm));
	if (w.by_name == NULL || w.comm == NULL) {
		free(w.by_name);
		free(w.comm);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w.ns; i++) {
		const char *n = isc_trace_str(t, (uint32_t)i);
		w.comm[i] = strstr(n, "nccl") != NULL || strstr(n, "gloo") != NULL;
	}
	/* The work that ends last (the order puts a host segment after a GPU operation that
	 * ends with it); a thread sleeping or waiting until exit is not where the run ends,
	 * nor a CPU sample while recorded work exists (isc_graph_ends_run). */
	size_t last = c->n;
	while (last > 1 && !isc_graph_ends_run(t, c, c->order[last - 1])) {
		last--;
	}
	uint32_t at = c->order[last - 1];
	int64_t cur = c->node[at].t1 < a->window.end ? c->node[at].t1 : a->window.end;
	int r = 0;
	uint64_t guard = 2 * (uint64_t)c->n + 2;
	while (r == 0 && at != ISC_GN_NONE && cur > w.ws && guard-- > 0) {
		r = step(&w, &at, &cur);
	}
	if (c->n_pieces > 0) {
		count_piece(&w, &c->pieces[c->n_pieces - 1], w.open_end);
	}
	if (!w.keep) {
		free(c->pieces);
		c->pieces = NULL;
		c->n_pieces = 0;
	}
	/* Pieces were found backwards. */
	for (size_t i = 0, j = c->n_pieces; i + 1 < j; i++, j--) {
		struct isc_cp_piece x = c->pieces[i];
		c->pieces[i] = c->pieces[j - 1];
		c->pieces[j - 1] = x;
	}
	top_names(&w);
	free(w.by_name);
	free(w.comm);
	return r;
}

/* Every category, once: its name (stable: reports, JSON and the verdict read it) and the
 * side its time counts for. */
static const struct {
	const char *name;
	enum isc_cp_side side;
} cats[ISC_CP__COUNT] = {
	[ISC_CP_KERNEL] = { "kernel", ISC_CPS_GPU },
	[ISC_CP_COMM] = { "communication", ISC_CPS_GPU },
	[ISC_CP_H2D] = { "h2d_copy", ISC_CPS_COPY },
	[ISC_CP_D2H] = { "d2h_copy", ISC_CPS_COPY },
	[ISC_CP_GPU_OTHER] = { "gpu_other", ISC_CPS_GPU },
	[ISC_CP_GPU_GAP] = { "gpu_gap", ISC_CPS_IDLE },
	[ISC_CP_LAUNCH] = { "launch_latency", ISC_CPS_IDLE },
	[ISC_CP_HOST] = { "host_compute", ISC_CPS_HOST },
	[ISC_CP_RUNTIME] = { "cuda_runtime", ISC_CPS_HOST },
	[ISC_CP_SYNC] = { "sync_return", ISC_CPS_HOST },
	[ISC_CP_BLOCKED] = { "blocked", ISC_CPS_HOST },
	[ISC_CP_IO] = { "io_wait", ISC_CPS_HOST },
	[ISC_CP_HOST_WAIT] = { "host_wait", ISC_CPS_HOST },
	[ISC_CP_UNTRACED] = { "untraced", ISC_CPS_IDLE },
	[ISC_CP_STREAM_WAIT] = { "stream_wait", ISC_CPS_IDLE },
	[ISC_CP_COMM_WAIT] = { "comm_wait", ISC_CPS_COMM },
};

const char *isc_cp_cat_name(enum isc_cp_cat c)
{
	return c < ISC_CP__COUNT ? cats[c].name : "unknown";
}

enum isc_cp_side isc_cp_side(enum isc_cp_cat c)
{
	return c < ISC_CP__COUNT ? cats[c].side : ISC_CPS_IDLE;
}

const char *isc_cp_kind_name(enum isc_cp_kind k)
{
	static const char *const names[ISC_CPK__COUNT] = { "kernel", "scope", "call", "copy/memset",
							   "function" };
	return k < ISC_CPK__COUNT ? names[k] : "unknown";
}

int64_t isc_cp_sum(const struct isc_causal *c, enum isc_cp_side side)
{
	int64_t v = 0;
	for (int k = 0; k < ISC_CP__COUNT; k++) {
		v += cats[k].side == side ? c->cat[k] : 0;
	}
	return v;
}

int64_t isc_cp_gpu(const struct isc_causal *c)
{
	return isc_cp_sum(c, ISC_CPS_GPU);
}

int64_t isc_cp_copies(const struct isc_causal *c)
{
	return isc_cp_sum(c, ISC_CPS_COPY);
}

int64_t isc_cp_host(const struct isc_causal *c)
{
	return isc_cp_sum(c, ISC_CPS_HOST);
}
