/* SPDX-License-Identifier: MIT */
/*
 * External correlation: per-thread stacks of ids a tool pushes around its own
 * regions (the PyTorch profiler uses CUSTOM0/1, InferScope CUSTOM2). Every API
 * record made while a stack is non-empty is preceded by one
 * EXTERNAL_CORRELATION record per kind, pairing the top id with the API call's
 * correlation id; GPU records carry that correlation id, so a consumer maps
 * kernels and copies back to its own ids through these records.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/simgpu/cupti/cupti-sim.h"

#define STACK_DEPTH 64

struct id_stack {
	uint64_t ids[STACK_DEPTH];
	unsigned depth; /* may exceed STACK_DEPTH: deeper ids are not kept */
};

static __thread struct id_stack stacks[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

static bool valid_kind(CUpti_ExternalCorrelationKind kind)
{
	return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
	       kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

CUPTI_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
								uint64_t id)
{
	struct id_stack *s;

	if (!valid_kind(kind)) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	s = &stacks[kind];
	if (s->depth < STACK_DEPTH) {
		s->ids[s->depth] = id;
	}
	s->depth++;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
							       uint64_t *lastId)
{
	struct id_stack *s;

	if (!valid_kind(kind)) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	s = &stacks[kind];
	if (s->depth == 0) {
		return CUPTI_ERROR_QUEUE_EMPTY;
	}
	s->depth--;
	if (lastId) {
		*lastId = s->depth < STACK_DEPTH ? s->ids[s->depth] : 0;
	}
	return CUPTI_SUCCESS;
}

/* On the thread of the API call, before its API record. Caller holds the lock. */
void isc_cupti_record_external(uint32_t correlation_id)
{
	union isc_cupti_record rec;
	int kind;

	if (!isc_cupti_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
		return;
	}
	for (kind = CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN;
	     kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; kind++) {
		struct id_stack *s = &stacks[kind];

		if (s->depth == 0 || s->depth > STACK_DEPTH) {
			continue;
		}
		memset(&rec, 0, sizeof(rec));
		rec.external.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		rec.external.externalKind = (CUpti_ExternalCorrelationKind)kind;
		rec.external.externalId = s->ids[s->depth - 1];
		rec.external.correlationId = correlation_id;
		isc_cupti_put(&rec, 0);
	}
}
