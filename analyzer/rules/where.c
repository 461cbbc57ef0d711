/* SPDX-License-Identifier: MIT */
/*
 * Names the code a suggestion means: the events a rule is built on (docs/rules.md, "Where
 * the rules point") carry stacks; their sites (isc_stack_site: the innermost Python frame,
 * else the innermost native frame outside the runtime) are summed by the events' time,
 * and the heaviest one is the suggestion's `where`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/model/graph-nodes.h"
#include "analyzer/model/profile.h"
#include "analyzer/rules/rules.h"

/* Which events a rule is built on; their weight (ns), 0 when the event is not one. */
typedef int64_t (*isc_where_fn)(const struct isc_trace *t, const struct isc_ev *e);

static bool api(const struct isc_ev *e, int sub)
{
	return e->type == ISC_T_CUDA_API && e->sub == sub;
}

static int64_t sync_copies(const struct isc_trace *t, const struct isc_ev *e)
{
	bool async = api(e, ISC_AC_MEMCPY) && strstr(isc_trace_str(t, e->name), "Async") != NULL;
	return api(e, ISC_AC_MEMCPY) && ((e->flags & ISC_F_BLOCKED) || !async) ? e->dur : 0;
}

static int64_t pageable_copies(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return api(e, ISC_AC_MEMCPY) && (e->flags & ISC_F_PAGEABLE) ? e->dur : 0;
}

static int64_t copies(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return api(e, ISC_AC_MEMCPY) ? e->dur : 0;
}

static int64_t syncs(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return api(e, ISC_AC_SYNC) ? e->dur : 0;
}

static int64_t launches(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return api(e, ISC_AC_LAUNCH) ? e->dur : 0;
}

static int64_t device_allocs(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return api(e, ISC_AC_MALLOC) || api(e, ISC_AC_FREE) ? e->dur : 0;
}

static int64_t host_allocs(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return e->type == ISC_T_MEMORY && e->sub == ISC_MK_ALLOC ? (int64_t)e->corr : 0;
}

static int64_t io_waits(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	bool io = e->sub == ISC_SYS_IO || e->sub == ISC_SYS_NET || e->sub == ISC_SYS_FS;
	return e->type == ISC_T_SYSCALL && io && !(e->flags & ISC_F_PACED) ? e->dur : 0;
}

static int64_t paced_reads(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return e->type == ISC_T_SYSCALL && (e->flags & ISC_F_PACED) ? e->dur : 0;
}

static int64_t lock_waits(const struct isc_trace *t, const struct isc_ev *e)
{
	return e->type == ISC_T_SYSCALL && e->sub == ISC_SYS_WAIT &&
			       isc_wait_kind_of(isc_trace_str(t, e->name)) == ISC_WK_LOCK
		       ? e->dur
		       : 0;
}

/* Kernels count for the stack of the call that launched them, or, replayed from a CUDA
 * graph, of the call that the capture turned into their node. */
static int64_t kernels(const struct isc_trace *t, const struct isc_ev *e)
{
	(void)t;
	return e->type == ISC_T_KERNEL ? e->dur : 0;
}

static const struct {
	const char *prefix;
	isc_where_fn weight;
	const char *what; /* "N % of <what>" */
} table[] = {
	{ "copy.sync", sync_copies, "the blocking copies' time" },
	{ "copy.pageable", pageable_copies, "the pageable copies' time" },
	{ "copy.", copies, "copy-call time" },
	{ "sync.", syncs, "synchronisation time" },
	{ "launch.", launches, "launch-call time" },
	{ "alloc.host", host_allocs, "sampled bytes allocated" },
	{ "alloc.", device_allocs, "allocation-call time" },
	{ "host.io", io_waits, "I/O wait time" },
	{ "host.input", paced_reads, "the paced reads' wait time" },
	{ "host.lock", lock_waits, "wait time" },
	{ "gpu.", kernels, "kernel time (by launching call)" },
};

static int pick(const char *id)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strncmp(id, table[i].prefix, strlen(table[i].prefix)) == 0) {
			return (int)i;
		}
	}
	return -1;
}

struct sites {
	struct isc_wmap m;
	int64_t *w;
	size_t cap;
	int64_t total;
};

static int add_site(const struct isc_trace *t, struct sites *s, const struct isc_stack_ref *r,
		    int64_t w)
{
	int via = -1;
	int i = isc_stack_site(t, r, &via);
	s->total += w;
	if (i < 0) {
		return 0;
	}
	const struct isc_frame *f = isc_stack_frame(r, (size_t)i);
	uint32_t via_fn = via >= 0 ? isc_stack_frame(r, (size_t)via)->function : 0;
	uint64_t a = (uint64_t)f->function | ((uint64_t)isc_frame_where(f) << 32);
	uint64_t b = (uint64_t)(isc_frame_pos(f) & 0x7fffffffu) | ((uint64_t)f->kind << 31) |
		     ((uint64_t)via_fn << 32);
	bool added;
	size_t k = isc_wmap_get(&s->m, a, b, &added);
	if (k == SIZE_MAX) {
		return -ENOMEM;
	}
	if (k >= s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		int64_t *v = realloc(s->w, cap * sizeof(*v));
		if (v == NULL) {
			return -ENOMEM;
		}
		memset(v + s->cap, 0, (cap - s->cap) * sizeof(*v));
		s->w = v;
		s->cap = cap;
	}
	s->w[k] += w;
	return 0;
}

static void describe(const struct isc_trace *t, const struct sites *s, const char *what, char *out,
		     size_t n)
{
	size_t best = SIZE_MAX;
	for (size_t k = 0; k < s->m.n; k++) {
		best = best == SIZE_MAX || s->w[k] > s->w[best] ? k : best;
	}
	if (best == SIZE_MAX || s->total <= 0 || s->w[best] <= 0) {
		return;
	}
	uint64_t a = s->m.k1[best], b = s->m.k2[best];
	struct isc_frame f =
		isc_frame_of_key((uint32_t)a, (uint32_t)(a >> 32), (uint8_t)((b >> 31) & 1),
				 (uint32_t)(b & 0x7fffffffu));
	char site[ISC_LINE / 2];
	isc_frame_text(t, &f, site, sizeof(site));
	uint32_t via = (uint32_t)(b >> 32);
	snprintf(out, n, "%s%s%s, %.0f %% of %s", site, via ? " via " : "",
		 via ? isc_trace_str(t, via) : "", 100.0 * (double)s->w[best] / (double)s->total,
		 what);
}

/* The stack an event stands for: its own, or for GPU work the issuer's (the launch call,
 * or the capture of the graph node it replays). */
static bool stack_for(const struct isc_trace *t, const struct isc_ev *e, struct isc_stack_ref *st)
{
	struct isc_issuer is;
	if (!isc_type_is_gpu(e->type)) {
		return isc_stack_of(t, e, st);
	}
	return isc_gpu_issuer(t, e, &is) && is.stack != 0 &&
	       isc_stack_get(t, is.input, is.stack, st);
}

int isc_rules_where(const struct isc_trace *t, struct isc_analysis *a)
{
	if (a->prof != NULL && a->prof->idle_site[0] != '\0') {
		for (size_t i = 0; i < a->n_sugg; i++) {
			if (strcmp(a->sugg[i].rule_id, "host.cpu-preprocessing") == 0) {
				char *w = a->sugg[i].where, tail[64];
				/* a long site is cut, never its share */
				snprintf(tail, sizeof(tail), ", %.0f %% of host time%s",
					 100.0 * a->prof->idle_site_share,
					 isc_has_gpu_work(a) ? " with the GPU idle" : "");
				w[0] = '\0';
				isc_fmt_append(w, sizeof(a->sugg[i].where) - strlen(tail),
					       a->prof->idle_site);
				isc_fmt_append(w, sizeof(a->sugg[i].where), tail);
			}
		}
	}
	bool any = false;
	for (size_t i = 0; i < t->n_inputs; i++) {
		any |= t->inputs[i].stacks != NULL;
	}
	if (!any || a->n_sugg == 0) {
		return 0;
	}
	struct sites *s = calloc(a->n_sugg, sizeof(*s));
	int *which = malloc(a->n_sugg * sizeof(*which));
	int r = s != NULL && which != NULL ? 0 : -ENOMEM;
	for (size_t k = 0; r == 0 && k < a->n_sugg; k++) {
		which[k] = pick(a->sugg[k].rule_id);
	}
	for (size_t i = 0; r == 0 && i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->ts < a->window.start || e->ts > a->window.end) {
			continue;
		}
		for (size_t k = 0; r == 0 && k < a->n_sugg; k++) {
			int64_t w = which[k] >= 0 ? table[which[k]].weight(t, e) : 0;
			struct isc_stack_ref st;
			if (w > 0 && stack_for(t, e, &st)) {
				r = add_site(t, &s[k], &st, w);
			}
		}
	}
	for (size_t k = 0; r == 0 && k < a->n_sugg; k++) {
		if (which[k] >= 0 && a->sugg[k].where[0] == '\0') {
			describe(t, &s[k], table[which[k]].what, a->sugg[k].where,
				 sizeof(a->sugg[k].where));
		}
	}
	for (size_t k = 0; s != NULL && k < a->n_sugg; k++) {
		isc_wmap_free(&s[k].m);
		free(s[k].w);
	}
	free(s);
	free(which);
	return r;
}
