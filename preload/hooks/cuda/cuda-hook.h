/* SPDX-License-Identifier: MIT */
/*
 * The shape every CUDA runtime hook shares (hook-cuda-*.c):
 *
 *	struct isc_cuda_call c;
 *	fn_type *real = isc_cuda_real(ISC_FN_x, RA);	// resolved once, then one load
 *	if (!isc_cuda_enter(&c, ISC_FN_x)) {
 *		return real ? real(...) : ISC_CUDA_NO_RUNTIME;	// forwarded, not recorded
 *	}
 *	cudaError_t r = real(...);
 *	isc_cuda_leave(&c, r, &info);			// one record, errno kept
 *
 * Entering takes one clock reading and a correlation id, and pushes the id to CUPTI
 * (gpu-timeline.h) so the GPU work of the call maps back to it. A call made while another
 * intercepted call of the same thread is running (a runtime that calls its own
 * exported functions) is forwarded only: the outer call is the one the user made.
 * The guard is not held across the real call, so the driver's ioctls and waits inside
 * it stay visible to the syscall hooks; it is raised only while we record.
 */
#ifndef ISC_CUDA_HOOK_H
#define ISC_CUDA_HOOK_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "common/clock.h"
#include "preload/hooks/cuda/cuda-fns.h"
#include "preload/gpu/gpu-timeline.h"
#include "format/record.h"
#include "preload/core/guard.h"
#include "preload/core/ids.h"
#include "preload/core/export.h"

/* What a hook returns when no runtime implements the function (cudaErrorInitializationError):
 * a process reached our export through dlsym without loading libcudart. */
#define ISC_CUDA_NO_RUNTIME ((cudaError_t)3)

#define RA __builtin_return_address(0)

/*
 * How a CUDA hook is exported: not under its plain name (ISC_CUDA_EXPORT marks the
 * definition, which stays hidden) but, through ISC_CUDA_VERSIONED(name) after it, as
 * hidden versions of libcudart's own symbol versions, name@libcudart.so.13, .12 and
 * .11.0 (ISC_CUDA_NODES, generated: the toolkit's version first). A program's call
 * names the version of the runtime it linked and binds to the hook; dlsym without a
 * version skips hidden versions and answers what the runtime answers, its own
 * function or NULL, as without the preload. References without a version bind to the
 * first node.
 */
#define ISC_CUDA_EXPORT
#define ISC_CUDA_VERSION_ALIAS(name, k, node)                         \
	extern __typeof__(name) isc_v##k##_##name                     \
		__attribute__((alias(#name), visibility("default"))); \
	__asm__(".symver isc_v" #k "_" #name ", " #name "@" node);
#define ISC_CUDA_VERSIONED(name) ISC_CUDA_NODES(ISC_CUDA_VERSION_ALIAS, name)

_Static_assert(ISC_CUDA_FN_COUNT <= ISC_CUDA_FN_MAX, "thread.h holds a counter per function");

struct isc_cuda_call {
	struct isc_thread *t;
	uint64_t t0;
	uint64_t corr;
	unsigned fn;
	bool pushed;
};

/* What a call did, beyond its result: filled by each hook with what applies. */
struct isc_cuda_info {
	const void *stream; /* cudaStream_t */
	uint64_t bytes;
	uint64_t ptr;
	const void *host_ptr; /* the host side of a copy, to tell pageable from pinned */
	uint8_t dir;	      /* enum isc_copy_dir */
	uint8_t host_mem;     /* enum isc_mem_kind, when known without a lookup */
	bool has_stream;
	bool has_bytes;
	bool has_ptr;
	bool blocked; /* besides the function's B flag */
};

/* ---- real functions (cuda-runtime.c) ---- */
extern void *_Atomic isc_cuda_real_fns[ISC_CUDA_FN_COUNT];
void *isc_cuda_resolve(unsigned fn, const void *caller);

static inline void *isc_cuda_real(unsigned fn, const void *caller)
{
	void *p = atomic_load_explicit(&isc_cuda_real_fns[fn], memory_order_acquire);
	return __builtin_expect(p != NULL, 1) ? p : isc_cuda_resolve(fn, caller);
}

/* True once the family is initialised and INFERSCOPE_CUDA is on. */
extern _Atomic bool isc_cuda_on;

static inline bool isc_cuda_enter(struct isc_cuda_call *c, unsigned fn)
{
	if (!atomic_load_explicit(&isc_cuda_on, memory_order_relaxed) || isc_guarded()) {
		return false;
	}
	struct isc_thread *t = isc_tls_self;
	if (__builtin_expect(t == NULL, 0)) {
		int saved = errno; /* the real call must see the application's errno */
		isc_guard_enter();
		t = isc_thread_attach();
		isc_guard_leave();
		errno = saved;
		if (t == NULL) {
			return false;
		}
	}
	if (t->cuda.depth != 0) {
		return false;
	}
	uint64_t now = isc_now();
	if (!isc_capturing(now)) {
		return false;
	}
	t->cuda.depth = 1;
	c->t = t;
	c->fn = fn;
	c->corr = isc_next_id();
	t->cuda.corr = c->corr;
	t->cuda.fn = fn;
	c->pushed = isc_cupti_push(c->corr, t->tid);
	c->t0 = now;
	return true;
}

/* The runtime and driver versions, asked once after the first call (cuda-runtime.c);
 * isc_cuda_versions_pending says whether that is still to do. */
extern _Atomic bool isc_cuda_versions_pending;
void isc_cuda_query_versions(void);

/* Records the call (cuda-record.c). */
void isc_cuda_record(const struct isc_cuda_call *c, uint64_t end, int result,
		     const struct isc_cuda_info *info, const struct isc_launch_payload *launch);

static inline void isc_cuda_finish(struct isc_cuda_call *c, int result,
				   const struct isc_cuda_info *info,
				   const struct isc_launch_payload *launch)
{
	uint64_t end = isc_now();
	if (c->pushed) {
		isc_cupti_pop();
	}
	c->t->cuda.depth = 0;
	isc_cuda_record(c, end, result, info, launch);
}

static inline void isc_cuda_leave(struct isc_cuda_call *c, int result,
				  const struct isc_cuda_info *info)
{
	isc_cuda_finish(c, result, info, NULL);
}

/*
 * The body most hooks share, expanded inside the exported function (so that RA is
 * the application's return address): `proto` is the plain function whose type the
 * real one has, `args` the parenthesised arguments, and the last argument an
 * expression of type struct isc_cuda_info evaluated after the real call (it may use
 * r_, the call's result).
 */
#define ISC_CUDA_HOOK(proto, fn, args, ...)               \
	struct isc_cuda_call c_;                          \
	__typeof__(proto) *real_ = isc_cuda_real(fn, RA); \
	if (real_ == NULL) {                              \
		return ISC_CUDA_NO_RUNTIME;               \
	}                                                 \
	if (!isc_cuda_enter(&c_, fn)) {                   \
		return real_ args;                        \
	}                                                 \
	cudaError_t r_ = real_ args;                      \
	struct isc_cuda_info info_ = __VA_ARGS__;         \
	isc_cuda_leave(&c_, r_, &info_);                  \
	return r_

/* ---- tables (cuda-tables.c) ---- */

/* Stream number for the trace: 0 the legacy default stream, 1 the per-thread default
 * stream, then 2, 3, ... for each other stream handle in order of first use. */
uint32_t isc_cuda_stream_id(const void *stream, bool per_thread_variant);

/* Pinned host ranges (cudaMallocHost, cudaHostAlloc, cudaHostRegister). */
void isc_pinned_add(const void *base, uint64_t size);
void isc_pinned_remove(const void *base);
bool isc_pinned_contains(const void *p);

/* Kernel names: a host stub or a cudaKernel_t handle -> interned name (0 unknown). */
uint32_t isc_kernel_name(const void *func);
/* __cudaGetKernel: the handle names the same kernel as the stub. */
void isc_kernel_alias(const void *handle, const void *stub);

/* fork() child: forget what belonged to the parent. */
void isc_cuda_tables_reset(void);

#endif /* ISC_CUDA_HOOK_H */
