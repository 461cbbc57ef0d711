/* SPDX-License-Identifier: MIT */
#include "analyzer/model/graph-nodes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/base/wmap.h"
#include "analyzer/model/stacks.h"

/* A clone of a clone of ...: instantiation of a cudaGraphClone is two hops; a chain this
 * long is a cycle in a corrupt input. */
#define MAX_HOPS 64

uint32_t isc_gnode_ref(struct isc_trace *t, uint16_t input, uint64_t id)
{
	struct isc_gnodes *g = t->gnodes;
	if (g == NULL && (g = t->gnodes = calloc(1, sizeof(*g))) == NULL) {
		return 0;
	}
	/* the map's indices are the table's: room for the entry before the key goes in */
	bool added;
	if (g->map.n >= UINT32_MAX - 1 || ISC_GROW(g->v, g->cap, g->map.n + 1, 64) < 0) {
		return 0;
	}
	size_t k = isc_wmap_get(&g->map, id, input, &added);
	if (k == SIZE_MAX) {
		return 0;
	}
	if (added) {
		g->v[k] = (struct isc_gnode){ .id = id, .thread = UINT32_MAX, .input = input };
		g->resolved = false;
	}
	return (uint32_t)k + 1;
}

int isc_gnode_define(struct isc_trace *t, uint16_t input, uint64_t id, uint64_t original,
		     uint32_t stack, uint32_t thread)
{
	uint32_t k = isc_gnode_ref(t, input, id);
	if (k == 0) {
		return -ENOMEM;
	}
	struct isc_gnode *n = &t->gnodes->v[k - 1];
	/* ids are unique per process: a second description of one node keeps the first */
	if (!n->defined) {
		n->defined = 1;
		n->cloned = original != 0;
		n->original = original;
		n->stack = stack;
		n->thread = thread;
	}
	return 0;
}

void isc_gnodes_resolve(struct isc_gnodes *g)
{
	if (g == NULL || g->resolved) {
		return;
	}
	for (size_t k = 0; k < g->map.n; k++) {
		size_t at = k;
		g->v[k].origin = 0;
		for (unsigned hop = 0; hop < MAX_HOPS && at != SIZE_MAX; hop++) {
			const struct isc_gnode *n = &g->v[at];
			if (n->defined && !n->cloned) {
				g->v[k].origin = (uint32_t)at + 1;
				break;
			}
			at = n->defined ? isc_wmap_find(&g->map, n->original, n->input) : SIZE_MAX;
		}
	}
	g->resolved = true;
}

void isc_gnodes_destroy(struct isc_gnodes *g)
{
	if (g == NULL) {
		return;
	}
	free(g->v);
	isc_wmap_free(&g->map);
	free(g);
}

bool isc_gpu_issuer(const struct isc_trace *t, const struct isc_ev *gpu, struct isc_issuer *out)
{
	const struct isc_gnodes *g = t->gnodes;
	if ((gpu->flags & ISC_F_GRAPH) && gpu->aux != 0 && g != NULL && gpu->aux <= g->map.n) {
		uint32_t o = g->v[gpu->aux - 1].origin;
		const struct isc_gnode *c = o != 0 ? &g->v[o - 1] : NULL;
		if (c != NULL && c->stack != 0 && c->thread < t->n_threads) {
			*out = (struct isc_issuer){ .stack = c->stack,
						    .thread = c->thread,
						    .input = c->input,
						    .captured = true };
			return true;
		}
	}
	const struct isc_ev *launch = isc_trace_launch_of(t, gpu);
	if (launch == NULL) {
		return false;
	}
	*out = (struct isc_issuer){ .stack = isc_ev_stack(launch),
				    .thread = launch->thread,
				    .input = launch->input };
	return true;
}
