/* SPDX-License-Identifier: MIT */
/*
 * The GPU timeline from CUPTI (cupti.c, cupti-records.c): what the rest of the
 * preload sees of it.
 *
 * libcupti is dlopen'ed, never linked: the one matching the loaded CUDA runtime's
 * major, or INFERSCOPE_CUPTI_LIB. It starts at whichever comes first: the driver's
 * call of InitializeInjection (CUDA_INJECTION64_PATH, set by the constructor) or the
 * first intercepted runtime call (which runs before the driver initialises, so every
 * intercepted call is correlated; with another tool owning the injection variable
 * it is the only way in).
 *
 * Correlation: around every recorded runtime call the hooks push an external id of
 * kind CUSTOM2 (the PyTorch profiler uses CUSTOM0/1). The id carries our correlation
 * id in its low 40 bits and the calling thread's id above, so a GPU record maps back
 * to the host call and its thread through CUPTI's EXTERNAL_CORRELATION record alone,
 * with nothing stored on the hot path.
 */
#ifndef ISC_GPU_TIMELINE_H
#define ISC_GPU_TIMELINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define ISC_EXT_CORR_BITS 40
#define ISC_EXT_CORR_MASK ((1ull << ISC_EXT_CORR_BITS) - 1)

/* What the hooks call on every recorded call, filled once before `active` is set. */
struct isc_cupti_hot {
	_Atomic bool active;
	int (*push)(int kind, uint64_t id);
	int (*pop)(int kind, uint64_t *id);
};

extern struct isc_cupti_hot isc_cupti_hot;

#define ISC_CUPTI_EXT_KIND 5 /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 */

static inline uint64_t isc_ext_id(uint64_t corr, uint32_t tid)
{
	return (corr & ISC_EXT_CORR_MASK) | (uint64_t)tid << ISC_EXT_CORR_BITS;
}

/* Pushes the external id of a call; true when it must be popped. */
static inline bool isc_cupti_push(uint64_t corr, uint32_t tid)
{
	if (!atomic_load_explicit(&isc_cupti_hot.active, memory_order_acquire)) {
		return false;
	}
	return isc_cupti_hot.push(ISC_CUPTI_EXT_KIND, isc_ext_id(corr, tid)) == 0;
}

static inline void isc_cupti_pop(void)
{
	uint64_t id;
	isc_cupti_hot.pop(ISC_CUPTI_EXT_KIND, &id);
}

/* Every flush: a forced flush of CUPTI's buffers, then the pending records drained. */
void isc_cupti_flush(void);
/* The recorder's periodic flush: completed records only (no forced flush), then the
 * pending records drained. */
void isc_cupti_flush_completed(void);

struct isc_cupti_report;
/* What CUPTI's status is and what it delivered (trace_metadata.cupti). */
void isc_cupti_report(struct isc_cupti_report *r);

/* Starts CUPTI once (dlopen, subscribe, enable kinds); `via` says who asked. Safe to
 * call from any thread; later calls return at once. */
void isc_cupti_start(const char *via);

/* The driver's injection entry point (CUDA_INJECTION64_PATH); returns 1. */
int InitializeInjection(void);

/* fork() child: no GPU timeline there. */
void isc_cupti_after_fork(void);

/* Status, for tests and the metadata. */
const char *isc_cupti_status(void);

#endif /* ISC_GPU_TIMELINE_H */
