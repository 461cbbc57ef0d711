/* SPDX-License-Identifier: MIT */
/*
 * A process waiting for its child (graph.h, docs/rules.md "Children"): a wrapper shell,
 * `timeout`, a program in Python's subprocess.run. The preload records the wait (wait,
 * wait3, wait4, waitpid, waitid) and its return value, which for all but waitid is the
 * pid of the child that ended it. Where it is not (waitid, a trace from elsewhere) the
 * child is told from times, as a hand-off between threads is: of the processes in the
 * analysis whose ppid is the waiting process's pid, the one whose recorded work ended
 * last inside the wait (a child that works on after the wait returned did not end it).
 * The wait then depends on the child's last segment - what the child did after it (its
 * exit, writing its trace) stays the wait's return time - and the child's first segment
 * on the parent's segment that ended last before it (the fork), so the what-ifs move the
 * child with its parent and the wait with the child. Without the child's trace the wait
 * stands alone: the child's work as the parent saw it, which the child lever re-times
 * whole.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyzer/causal/graph.h"

struct proc {
	uint32_t first; /* its earliest segment */
	uint32_t last;	/* its segment that ends last */
	int64_t end;	/* when its recorded work ended: a CPU sample's CPU time ends where
			 * its segment starts (graph-host.c) */
};

static bool is_sample(const struct isc_trace *t, const struct isc_gnode *g)
{
	return t->ev[g->ev].type == ISC_T_CPU_SAMPLE;
}

/* The segment of process k that ends last by `by` (the child's segments placed after
 * its recorded work, CPU samples, may end after the wait). */
static uint32_t last_by(const struct isc_trace *t, const struct isc_causal *c, const struct proc *p,
			uint16_t k, int64_t by)
{
	if (c->node[p->last].t1 <= by) {
		return p->last;
	}
	uint32_t x = ISC_GN_NONE;
	for (size_t i = 0; i < c->host_nodes; i++) {
		const struct isc_gnode *g = &c->node[i];
		if (t->ev[g->ev].input == k && !(g->flags & (ISC_GN_IDLE | ISC_GN_POLL)) &&
		    g->t1 <= by && (x == ISC_GN_NONE || g->t1 > c->node[x].t1)) {
			x = (uint32_t)i;
		}
	}
	return x;
}

/* The child that ended wait g, or -1: the one its return value names (ISC_F_CHILD_PID;
 * none when that child's trace is not in the analysis), else of the waiting process's
 * children the one whose work ended last inside the wait. */
static int child_of(const struct isc_trace *t, const struct isc_causal *c, const struct proc *p,
		    const struct isc_gnode *g)
{
	const struct isc_ev *w = &t->ev[g->ev];
	bool named = (w->flags & ISC_F_CHILD_PID) != 0;
	int64_t pid = t->inputs[w->input].pid;
	int best = -1;
	for (size_t k = 0; pid != 0 && k < t->n_inputs; k++) {
		const struct isc_input *in = &t->inputs[k];
		if (k == w->input || in->ppid != pid || in->pid == pid ||
		    p[k].first == ISC_GN_NONE || p[k].end <= isc_gn_t0(c, g) ||
		    (named ? in->pid != w->aux : p[k].end > g->t1)) {
			continue;
		}
		best = best < 0 || p[k].end > p[best].end ? (int)k : best;
	}
	return best;
}

int isc_graph_children(const struct isc_trace *t, struct isc_causal *c)
{
	bool any = false;
	for (size_t i = 0; i < c->host_nodes && !any; i++) {
		any = (c->node[i].flags & ISC_GN_CHILD) != 0;
	}
	if (!any || t->n_inputs < 2) {
		return 0;
	}
	struct proc *p = malloc(t->n_inputs * sizeof(*p));
	if (p == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < t->n_inputs; k++) {
		p[k] = (struct proc){ ISC_GN_NONE, ISC_GN_NONE, INT64_MIN };
	}
	for (size_t i = 0; i < c->host_nodes; i++) {
		const struct isc_gnode *g = &c->node[i];
		if (g->flags & (ISC_GN_IDLE | ISC_GN_POLL)) {
			continue; /* the process's work (a wait for its own child is) */
		}
		struct proc *x = &p[t->ev[g->ev].input];
		int64_t end = is_sample(t, g) ? isc_gn_t0(c, g) : g->t1;
		x->first = x->first == ISC_GN_NONE ||
					   isc_gn_t0(c, g) < isc_gn_t0(c, &c->node[x->first])
				   ? (uint32_t)i
				   : x->first;
		x->last = x->last == ISC_GN_NONE || g->t1 > c->node[x->last].t1 ? (uint32_t)i
										: x->last;
		x->end = end > x->end ? end : x->end;
	}
	for (size_t i = 0; i < c->host_nodes; i++) {
		struct isc_gnode *g = &c->node[i];
		if (!(g->flags & ISC_GN_CHILD) || !(g->flags & ISC_GN_LAST) ||
		    g->dep != ISC_GN_NONE) {
			continue;
		}
		int k = child_of(t, c, p, g);
		uint32_t x = k >= 0 ? last_by(t, c, &p[k], (uint16_t)k, g->t1) : ISC_GN_NONE;
		if (x == ISC_GN_NONE || c->node[x].t1 <= isc_gn_t0(c, g)) {
			continue; /* the release must end inside the wait (what-if.c) */
		}
		g->dep = x;
		g->flags |= ISC_GN_HANDOFF;
		c->child_waits++;
		p[k].end = INT64_MIN; /* a child ends once */
		/* The child started after the parent's segment that ended last before it. */
		struct isc_gnode *f = &c->node[p[k].first];
		uint32_t h = g->seq;
		while (h != ISC_GN_NONE && c->node[h].t1 > isc_gn_t0(c, f)) {
			h = c->node[h].seq;
		}
		if (h != ISC_GN_NONE && f->seq == ISC_GN_NONE && f->dep == ISC_GN_NONE) {
			f->dep = h;
			f->flags |= ISC_GN_WOKEN;
		}
	}
	free(p);
	return 0;
}
