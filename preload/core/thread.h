/* SPDX-License-Identifier: MIT */
/*
 * Per-thread state, reached through the one TLS pointer (guard.h).
 *
 * A thread's struct is allocated from an mmap'd slab the first time the thread
 * records, linked into a global registry and never freed: a thread's events and
 * exact counters must survive its exit (thread pools come and go) until the trace
 * is written. Only the owning thread writes to it (plain stores); the collector and
 * the flush read it, and tolerate a counter being one update behind.
 *
 * Hook families add their exact counters here (one struct each).
 */
#ifndef ISC_THREAD_H
#define ISC_THREAD_H

#include <stdatomic.h>
#include <stdint.h>

#include "format/record.h"

struct isc_chunk;

#define ISC_SCOPE_MAX 128 /* deeper scopes are counted, not recorded */

struct isc_scope_frame {
	uint64_t id;
	uint64_t start;
	uint64_t alloc_at_open; /* isc_thread.alloc_bytes when the scope opened */
	uint32_t name;
	int32_t cpu;
	uint32_t source;
	uint32_t recorded; /* 0 when the push fell outside the capture window */
};

/* Intercepted CUDA functions: hooks/cuda/cuda-fns.h's rows and the generated ones (about 380
 * for CUDA 13.0; a static assertion in hooks/cuda-hook.h says when a toolkit needs more). */
#define ISC_CUDA_FN_MAX 512

/* The CUDA hooks' exact per-function counters and per-thread state. */
struct isc_cuda_thread {
	uint32_t depth; /* intercepted calls in progress (inner ones forward only) */
	int32_t device; /* set by cudaSetDevice on this thread; CUDA's default 0 */
	/* The call in progress while depth is 1: what a CUPTI callback made inside it (a
	 * graph node) names as the call it came from. */
	uint64_t corr;
	uint32_t fn;
	/* ISC_CUDA_FN_MAX of them, from the library's arena at the thread's first call (NULL
	 * before, or when the arena is full): 8 KiB that a thread without CUDA never holds */
	struct isc_cuda_calls {
		uint64_t count;
		uint64_t ns;
	} * calls;
};

enum isc_thread_state {
	ISC_THREAD_LIVE = 0,
	ISC_THREAD_EXITING = 1, /* its TLS destructor ran; it may still record a little */
	ISC_THREAD_GONE = 2,	/* the collector saw it gone; its chunk was released */
};

/* Host hooks, malloc family (hooks/hook-malloc.c): whole-run exact counters. Byte
 * counts are the allocator's usable sizes, except bytes_requested. */
struct isc_malloc_counters {
	/* What a malloc or a free touches, in one cache line with the thread's alloc_bytes
	 * (struct isc_thread) */
	uint64_t calls;	      /* allocations that returned memory */
	uint64_t frees;	      /* free() of a non-NULL pointer, realloc's release */
	uint64_t bytes_freed; /* (requested: alloc_bytes; allocated: live + freed) */
	int64_t live;	      /* allocated - freed by this thread (< 0 when it frees
					 * what other threads allocated) */
	int64_t peak;
	int64_t countdown; /* requested bytes until the next sample, at most the threshold
			    * - 1 (so that a large allocation expires it too: hook-malloc.c) */
	/* the rest: failures, the sampler's expiries, mappings */
	uint64_t failed;  /* allocations that returned NULL */
	uint64_t rng;	  /* xorshift state of the sampler, 0 = unseeded */
	int64_t spare;	  /* the rest of the countdown beyond that cap */
	uint64_t sampled; /* memory events recorded */
	uint64_t mmaps, munmaps, mremaps;
	uint64_t mapped_bytes, unmapped_bytes;
};

/* Host hooks, system calls and waits (hooks/hook-syscalls.c): one slot per call name,
 * counted inside capture windows. Times are in the units of the hooks' duration
 * clock (TSC cycles or ns, see hooks/host-clock.c), converted when written. */
#define ISC_SYSCALL_SLOTS 52

/* The latency histogram of a call name: four buckets per power of two of the duration in
 * clock units (hooks/host.h, isc_sys_bucket), up to 2^40 units; longer calls share the last
 * bucket. Every call is in it, whatever the threshold, so percentiles cover them all. It is
 * allocated (from the library's arena) at the name's first call on the thread: a thread
 * slot holds a pointer, not 48 histograms, so the slots' reservation stays small
 * (buffer.c) and a thread pays memory only for the calls it makes. */
#define ISC_SYSCALL_HIST 160
/* Buckets of the CPU-sample handler's durations in ns, the same layout: up to ~2 ms. */
#define ISC_SAMPLE_HIST 84

struct isc_syscall_agg {
	uint64_t count;
	uint64_t total;
	uint64_t max;
	uint64_t bytes; /* bytes moved (positive results of I/O calls) */
	uint32_t errors;
	uint32_t events; /* calls also recorded as events */
	uint64_t *hist;	 /* ISC_SYSCALL_HIST buckets; NULL before the first call (or no memory) */
};

struct isc_thread {
	/* Current chunk. Written by the owner only; the collector reads it (acquire) to
	 * spill partial progress. The owner clears it (release) before a full chunk goes
	 * onto the full list, so the collector never sees a chunk it already released. */
	struct isc_chunk *_Atomic chunk;
	struct isc_thread *next; /* registry link, immutable once published */
	uint32_t tid;
	_Atomic int state; /* enum isc_thread_state */
	char comm[16];	   /* thread name when it first recorded */

	uint64_t recorded;		 /* events recorded by this thread */
	uint64_t dropped[ISC_EV__COUNT]; /* events lost at the memory cap, by kind */

	/* Scopes (api.c): the open ones, innermost last. */
	uint32_t depth; /* may exceed ISC_SCOPE_MAX: frames beyond are counted only */
	uint32_t scope_overflow;
	struct isc_scope_frame scopes[ISC_SCOPE_MAX];

	struct isc_cuda_thread cuda;
	/* Bytes this thread allocated so far (the malloc hooks keep it exact); scopes
	 * report the difference between their open and close. Beside the malloc counters:
	 * the hooks' fast path updates both, in one cache line. */
	_Alignas(64) uint64_t alloc_bytes;
	/* Host hooks (hooks/): reset by their own fork handler. */
	struct isc_malloc_counters malloc;
	struct isc_syscall_agg syscalls[ISC_SYSCALL_SLOTS];
	int32_t numa_node; /* 1 + node last seen by a host hook; 0 = unknown */

	/* CPU samples (samplers/): the signal handler writes them into a chunk of their
	 * own, so that a sample never lands in the middle of a record the interrupted
	 * code is writing. Owned by the thread (in its handler), spilled like chunk. */
	struct isc_chunk *_Atomic sample_chunk;
	uint64_t samples;      /* samples recorded */
	uint64_t samples_lost; /* samples not recorded (memory cap, re-entered handler) */
	uint32_t in_unwind;    /* the thread is unwinding its own stack (a sampled event) */
	uint32_t py_skip;      /* handler nesting guard */
	uint64_t py_tstate;    /* last PyThreadState found for this thread (a hint) */
	uint64_t py_chain[32]; /* addresses of its Python frames at the last sample */
	uint32_t py_chain_n;
	uint32_t py_chunks_n; /* 3.11+: its data-stack chunks at the last sample, newest first */
	uint64_t py_chunks[4];
	uint16_t py_absent;	 /* samples left before looking for its PyThreadState again */
	uint16_t py_backoff;	 /* and how many the next miss skips (doubling, at most 64) */
	uint64_t sample_cpu_ns;	 /* CPU time its samples have weighed up to (cpu-sampler.c) */
	uint64_t sample_owed_ns; /* of it, expiries the handler skipped: the next sample's */
	int32_t sample_timer;	 /* 1 + the id of the timer its last sample came from */
	uint64_t sample_wall_ns; /* isc_now() just after that CPU clock was read */
	uint64_t sample_ns;	 /* time spent in the sampling handler (ns) */
	uint64_t sample_py_ns;	 /* of which walking Python frames */
	/* The same per sample, as histograms of ns (hooks/host/host.h's isc_hist_bucket): on a
	 * loaded machine a few samples preempted inside the handler make the sums, and the
	 * median stays the handler's own cost. */
	uint32_t sample_hist[2][ISC_SAMPLE_HIST];
	uint64_t stack_window;	     /* event stacks: start of the current second (ns) */
	uint32_t stack_budget[2];    /* event stacks taken in it: launches, other events */
	uint64_t stack_lo, stack_hi; /* the unwinder's checked range of this thread's stack */
	/* the unwind rows its walks used (samplers/unwind-cfi.c): return address, packed rules */
	uint64_t unwind_rows[256][2];
};

#endif /* ISC_THREAD_H */
