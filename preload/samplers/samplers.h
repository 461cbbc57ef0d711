/* SPDX-License-Identifier: MIT */
/*
 * Samplers: what is sampled rather than hooked - stacks on recorded events, the NUMA
 * node and page migrations, per-thread CPU and wait time and the live heap on the
 * collector's tick. lifecycle.c initialises and flushes them in its family table;
 * trailer.c writes what they report.
 */
#ifndef ISC_SAMPLERS_H
#define ISC_SAMPLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/record.h"

/* ---- stacks (stacks.c) ---- */
#define ISC_STACK_MAX 64

/* Return addresses of the caller's stack, innermost first, the library's own frames
 * skipped; 0 when stacks are off or libunwind could not be loaded. */
unsigned isc_stacks_capture(uint64_t *pcs, unsigned max);
unsigned isc_stacks_depth(void);
void isc_stacks_fill(struct isc_event *recs, uint32_t tid, const uint64_t *pcs, unsigned n);
/* The stack of an event: native return addresses then Python frames (two words each),
 * with CPU sampling on (rate limited per thread, cpu-sampler.c); the opt-in
 * INFERSCOPE_STACKS frames otherwise. Returns words; max must hold ISC_EVENT_STACK_WORDS. */
#define ISC_EVENT_STACK_WORDS (ISC_STACK_MAX + 2 * 48)
unsigned isc_stacks_capture_event(uint64_t *words, unsigned max, uint16_t *native,
				  uint16_t *python);
/* INFERSCOPE_STACKS bounds the native frames of an event stack (words: native pcs, then
 * python pairs; n words): the innermost are kept, the Python frames all. Returns the
 * words left, *native updated. */
unsigned isc_stacks_bound(uint64_t *words, unsigned n, uint16_t *native, unsigned python);
/* The caller's stack as a block with a header word (encode.h), never rate limited (a CUDA
 * graph node's: made once, replayed many times): native and Python frames with CPU
 * sampling on, the opt-in INFERSCOPE_STACKS native frames otherwise (as deep as the
 * walk goes: the caller trims and bounds them). Returns words written (0: none); max
 * must hold ISC_EVENT_STACK_WORDS + 1. */
unsigned isc_stacks_block_here(uint64_t *w, unsigned max);
/* The converter's resolver (live process): "symbol+0x1f (libfoo.so)". */
const char *isc_stacks_resolve(void *ctx, uint64_t addr, char *buf, size_t cap);
void isc_stacks_init(void);

/* ---- NUMA (numa.c) ---- */
int isc_numa_node_now(void); /* node of the CPU the caller runs on, -1 unknown */
void isc_numa_init(void);
/* Final flush: reads the migrations at the end and records them as one instant. */
void isc_numa_flush(void);

/* trace_metadata.numa: page migrations over the run (task, system) and the start node. */
struct isc_numa_report {
	bool have_task, have_system;
	uint64_t task_start, task_end; /* pages migrated by the process's threads */
	uint64_t system;	       /* by the whole system over the run */
	int start_node;		       /* -1 unknown */
};
/* False when nothing is known (no NUMA statistics on this kernel). */
bool isc_numa_report(struct isc_numa_report *r);

/* ---- CPU time, wait time and live heap on the collector tick (cpu-time.c) ---- */
void isc_cpu_time_init(void);
/* Final flush: one last tick taken by the collector while the window is open. */
void isc_cpu_time_flush(void);

/* trace_metadata.heap: the live heap at the end and its sampled peak. */
struct isc_heap_report {
	int64_t live_at_end;
	int64_t peak_sampled;
};
/* False when the malloc hooks are off (nothing is known of the heap). */
bool isc_heap_report(struct isc_heap_report *r);

#endif /* ISC_SAMPLERS_H */
