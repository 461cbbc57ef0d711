/* SPDX-License-Identifier: MIT */
/*
 * The CPU sampler: every thread sampled on its own CPU-time clock, native stacks
 * and Python frames, symbolised when the trace is written.
 *
 *   cpu-sampler.c  signal and timers (per thread, on its CPU clock), the handler,
 *                  thread discovery on the collector, trace metadata
 *   unwind-cfi.c   native stacks by the modules' .eh_frame_hdr tables, the stack read
 *                  in place within the thread's checked range (the fast path)
 *   unwind.c       where those cannot reach a stack's end: libunwind (dlopen'ed) or
 *                  frame pointers, reads that cannot fault
 *   py-stacks.c    Python frames read from the interpreter's structures without the
 *                  GIL (CPython 3.8-3.13), resolved on the collector
 *   py-layouts.c   per-version struct offsets (from CPython's headers)
 *   symbolize.c    ELF symbol tables, .gnu_debugdata, build-ids, perf-PID.map
 *
 * Everything the handler calls is async-signal-safe: no locks, no malloc, system
 * calls only from the async-signal-safe list (process_vm_readv is a plain system
 * call), errno saved and restored.
 */
#ifndef ISC_CPU_SAMPLER_H
#define ISC_CPU_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "format/encode.h"

struct isc_thread;

#define ISC_SAMPLE_NATIVE_MAX 128
#define ISC_SAMPLE_PY_MAX 96

/* ---- cpu-sampler.c ---- */
/* lifecycle.c's family table (constructor): configuration, unwinder, interpreter. */
void isc_samplers_init(void);
/* The loaded segment of this library's code (frames to skip in stacks); 0, 0 unknown. */
void isc_self_code(uintptr_t *lo, uintptr_t *hi);
/* Sampling is configured on: lifecycle.c picks a free real-time signal, installs
 * isc_samplers_on_signal on it and calls isc_samplers_start with it. */
bool isc_samplers_wanted(void);
void isc_samplers_on_signal(int s, siginfo_t *si, void *uc);
void isc_samplers_start(int sig);   /* the calling (main) thread's timer, the collector's tick */
void isc_samplers_fork_child(void); /* timers are not inherited: the child's anew */
/* From a blocking call of thread t (its own): the sample its CPU-time timer owes, when a
 * period or more of CPU time went by since its previous one (cpu-sampler.c says why). */
void isc_sampler_catch_up(struct isc_thread *t);

/* trace_metadata.sampling (trailer.c writes it). */
struct isc_sampling_report {
	uint64_t cpu_hz; /* 0: off */
	int signal;
	const char *python;   /* "ok", "absent", "unsupported: ..." */
	const char *unwinder; /* "libunwind" or "frame-pointers" */
	uint64_t samples, lost, timer_failures;
	uint64_t unsampled_threads;	/* threads that blocked the signal: no timer then */
	uint64_t unwind_fallbacks;	/* stacks unwound by libunwind: the tables could not */
	uint64_t handler_ns, python_ns; /* time in the handler, of which the Python walk */
	uint64_t handler_median_ns, python_median_ns; /* the same per sample, medians */
	uint64_t clock_reads;  /* the handler's system calls: the thread's CPU clock */
	uint64_t python_reads; /* and its Python walks' process_vm_readv */
	bool stepped_aside;
};
bool isc_sampling_report(struct isc_sampling_report *r);
/*
 * Around a change of the calling thread's signal mask (the sigprocmask and
 * pthread_sigmask hooks). begin: a mask that blocks our signal deletes the thread's
 * timer first (and so any signal of it still pending); true when end must be called
 * after the real call, which re-arms the timer of a thread that unblocked it.
 */
bool isc_sampler_mask_begin(int how, const sigset_t *set);
void isc_sampler_mask_end(void);
/* Stack words (native pcs, then Python frame pairs) of the calling thread, for events
 * that carry a stack (isc_stack_capture_here). Returns words, 0 when off. */
unsigned isc_sampler_stack_here(uint64_t *words, unsigned max, uint16_t *native, uint16_t *python);
int isc_sampler_signal(void); /* 0 when sampling is off */
/* Event stacks a thread may still take this second: class 0 kernel launches (at most
 * 20 a second), class 1 other events (20). Counts the one it grants. */
bool isc_sampler_stack_budget(struct isc_thread *t, unsigned cls);

/* A CUDA call's stack as a block with a header word (encode.h), rate limited; words
 * written (0: none). */
#define ISC_CUDA_STACK_WORDS (1 + 64 + 2 * 48)
unsigned isc_cuda_stack(uint64_t *w, unsigned max, bool launch);
void isc_cuda_stack_fill(struct isc_event *recs, uint32_t tid, const uint64_t *w, unsigned n);

/* ---- unwind-cfi.c ---- */
/* Return addresses from the context uc by the modules' unwind tables (.eh_frame_hdr),
 * reading the stack of thread t (NULL: not cached) in place. *complete: the walk
 * reached the outermost frame or max; otherwise what it has is a prefix. */
unsigned isc_unwind_cfi(const ucontext_t *uc, struct isc_thread *t, uint64_t *pcs, unsigned max,
			bool *complete);

/* ---- unwind.c ---- */
/* Loads libunwind (constructor only). */
void isc_unwind_init(void);
bool isc_unwind_have_libunwind(void);
uint64_t isc_unwind_fallbacks(void); /* stacks the unwind tables left to libunwind */
/* Return addresses from the context uc (innermost first; the first is its pc). In a
 * signal handler (in_handler), libunwind is used only when the program does not use
 * it itself: its lock would be the program's too. */
unsigned isc_unwind_signal(const ucontext_t *uc, uint64_t *pcs, unsigned max, bool in_handler);
/* The calling thread's return addresses, walked from here (not in a signal handler):
 * at most max are walked, this library's own frames then left out (isc_unwind_init
 * first). Returns how many are left in pcs. */
unsigned isc_unwind_here(uint64_t *pcs, unsigned max);
/* Copies n bytes at addr without faulting: bytes copied (< n: unmapped). */
size_t isc_safe_read(void *dst, uint64_t addr, size_t n);
/* Around any call into libunwind (hooks/stacks.c too): a fork child whose parent had
 * a thread inside it stops using it (its mutex may be held forever). */
void isc_unwind_enter(void);
void isc_unwind_leave(void);
void isc_unwind_fork_child(void);
bool isc_safe_read_ok(void); /* process_vm_readv works here */
/* n reads in one process_vm_readv: bytes copied, up to the first that failed. */
struct iovec;
size_t isc_safe_readv(const struct iovec *local, const struct iovec *remote, unsigned n);

/* ---- py-stacks.c ---- */
struct isc_py_layout {
	uint32_t version; /* major << 8 | minor */
	uint32_t interp_head, tstate_head, ts_next, ts_thread_id, ts_native_tid;
	uint32_t ts_cframe, cur_frame;
	uint32_t f_prev, f_code, f_instr, f_owner, f_entry;
	uint32_t co_name, co_filename, co_firstlineno, co_lines, co_code_start;
	uint32_t bytes_sval, ascii_size, compact_size, str_state;
	uint32_t ts_datastack, rt_finalizing; /* 3.11+: frames' chunks; _PyRuntime._finalizing */
};
extern const struct isc_py_layout isc_py_layouts[];

/* Finds an interpreter in the process (collector; cheap when already found). */
void isc_py_discover(void);
/* "ok", "absent" or "unsupported: <why>", for trace_metadata.sampling.python. */
const char *isc_py_status(void);
/* An interpreter was found (isc_py_walk may return frames); async-signal-safe. */
bool isc_py_present(void);
/* process_vm_readv calls of the handler's Python walks so far (trace_metadata.sampling). */
uint64_t isc_py_walk_reads(void);
/* In the handler: Python frames of the calling thread t as word pairs; returns frames
 * and sets *status (enum isc_py_status). t->py_tstate (the thread's PyThreadState last
 * time) and t->py_chain (its frames' addresses) are hints, updated. */
unsigned isc_py_walk(struct isc_thread *t, uint64_t *words, unsigned max_frames, uint16_t *status);
/* Collector: turns raw Python frames of records into names and lines (isc_spill_prepare). */
void isc_py_resolve_records(struct isc_event *recs, uint32_t n);

/* ---- symbolize.c ---- */
/* The trace writer's symboliser (live process); see encode.h. */
bool isc_symbolize(void *ctx, uint64_t pc, struct isc_symbol *out);
void isc_symbolize_reset(void);
/* Catches up with the loader (a long-running process: the flight recorder symbolises
 * each segment it closes): adds the modules loaded since, or starts again when one was
 * unloaded (its range may now be another's). */
void isc_symbolize_refresh(void);

#endif /* ISC_CPU_SAMPLER_H */
