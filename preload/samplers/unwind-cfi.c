/* SPDX-License-Identifier: MIT */
/*
 * Native stacks by the modules' own unwind tables, without libunwind and without a
 * system call per frame: the sampler's fast path (unwind.c falls back to libunwind
 * only where this one cannot reach the end of a stack).
 *
 * Each frame: _dl_find_object (async-signal-safe, lock-free, glibc 2.35) gives the
 * module of the pc and its PT_GNU_EH_FRAME (.eh_frame_hdr); its sorted table finds
 * the FDE; the CIE's and the FDE's call-frame instructions run up to the pc and give
 * the CFA and where rbp and the return address were saved (unwind-dwarf.c). Rows
 * found are kept in a cache shared by the threads (a module unloaded and another
 * loaded at its address could meet a stale row: the walk stays inside the checked
 * stack range, so the price is a wrong frame, never a fault). Only what x86-64 compilers
 * emit for ordinary functions is followed: the CFA as rsp or rbp plus an offset,
 * registers saved at CFA offsets. Anything else (DWARF expressions: PLT stubs,
 * realigned stacks; signal frames) stops the walk, and the caller lets libunwind do
 * the whole stack. A module without unwind tables (JIT code) is stepped by its frame
 * pointer. The walk ends cleanly where the tables say the return address is
 * undefined (_start, the thread start in clone3): only such a stack is complete.
 *
 * Stack reads are plain loads, validated against the thread's stack: the range from
 * the interrupted stack pointer to the top of the thread's stack - glibc puts a
 * thread's descriptor (pthread_self()) at the top of its stack block, and the main
 * thread's frames lie below __libc_stack_end. The range is checked once to be mapped
 * (process_vm_readv of a byte per page, which fails instead of faulting) and kept per
 * thread; a deeper stack pointer later extends it by the pages below. The unwind
 * tables are read in place: they belong to loaded modules.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/core/thread.h"
#include "preload/samplers/cpu-sampler.h"
#include "preload/samplers/unwind-dwarf.h"

extern void *__libc_stack_end; /* ld.so: the stack pointer at _start */

#define MAX_STACK (1ull << 30) /* a stack range larger than this is not believed */
#define PAGE 4096u

/* ---- the thread's stack range ---- */

/* Every page of [lo, hi) is mapped and readable (one byte read from each). */
static bool mapped(uint64_t lo, uint64_t hi)
{
	static const unsigned batch = 512;
	unsigned char sink[512];
	struct iovec local = { sink, 0 }, remote[512];
	for (uint64_t a = lo; a < hi;) {
		unsigned k = 0;
		for (; k < batch && a < hi; k++, a += PAGE) {
			remote[k].iov_base = (void *)(uintptr_t)a;
			remote[k].iov_len = 1;
		}
		local.iov_len = k;
		long r = syscall(SYS_process_vm_readv, getpid(), &local, 1, remote, k, 0);
		if (r != (long)k) {
			return false;
		}
	}
	return true;
}

static bool stack_range(struct isc_thread *t, uint64_t sp, uint64_t *lo, uint64_t *hi)
{
	if (t && t->stack_hi && sp >= t->stack_lo && sp < t->stack_hi) {
		*lo = sp;
		*hi = t->stack_hi;
		return true;
	}
	uint64_t self = (uint64_t)pthread_self(), main_end = (uint64_t)__libc_stack_end, top;
	if (self > sp && self - sp <= MAX_STACK) {
		top = self; /* a thread of pthread_create: its descriptor tops its stack */
	} else if (main_end > sp && main_end - sp <= MAX_STACK) {
		top = main_end;
	} else {
		return false; /* an alternate signal stack, a thread of another runtime */
	}
	uint64_t from = sp & ~(uint64_t)(PAGE - 1);
	uint64_t to = t && t->stack_hi == top && t->stack_lo > from ? t->stack_lo : top;
	if (!mapped(from, to)) {
		return false;
	}
	if (t) {
		t->stack_lo = from;
		t->stack_hi = top;
	}
	*lo = sp;
	*hi = top;
	return true;
}

static bool load(uint64_t a, uint64_t lo, uint64_t hi, uint64_t *v)
{
	if (a < lo || a > hi - 8 || a % 8) {
		return false;
	}
	*v = *(const uint64_t *)(uintptr_t)a;
	return true;
}

/*
 * Rows already found, shared by every thread: a stack of libtorch is ~50 frames deep,
 * and the same return addresses come back sample after sample. A slot is three words
 * written without a lock; a reader takes it only when the check word matches the
 * other two, so a slot that two threads wrote at once reads as a miss, never as a mix.
 * 16384 slots (384 KiB): with 4096, two lookups in a hundred of the libtorch loop found
 * their slot taken by another of its ~1 000 rows, and each such miss parses the row again.
 */
#define RCACHE 16384
#define RCHECK 0x9e3779b97f4a7c15ull

struct rslot {
	_Atomic uint64_t key, val, check;
};
static struct rslot rcache[RCACHE];

static struct rslot *rslot_of(uint64_t pc)
{
	return &rcache[(pc ^ pc >> 12 ^ pc >> 24) % RCACHE];
}

/* The rules that fit the cache: CFA from rsp or rbp with a 32-bit offset, rbp and the
 * return address the same, undefined or at CFA offsets that are multiples of 8. */
static bool pack(const struct isc_cfi_rules *r, uint64_t *v)
{
	if ((r->cfa_reg != ISC_REG_SP && r->cfa_reg != ISC_REG_FP) ||
	    r->cfa_off != (int32_t)r->cfa_off) {
		return false;
	}
	uint64_t w = (uint64_t)(r->cfa_reg == ISC_REG_FP) | (uint64_t)(uint32_t)r->cfa_off << 1;
	for (int k = 0; k < 2; k++) {
		if (r->how[k] == ISC_OTHER || r->off[k] % 8 || r->off[k] / 8 < -4096 ||
		    r->off[k] / 8 >= 4096) {
			return false;
		}
		w |= (uint64_t)r->how[k] << (33 + 15 * k);
		w |= (uint64_t)((r->off[k] / 8) & 0x1fff) << (35 + 15 * k);
	}
	*v = w;
	return true;
}

static void unpack(uint64_t w, struct isc_cfi_rules *r)
{
	r->cfa_reg = w & 1 ? ISC_REG_FP : ISC_REG_SP;
	r->cfa_off = (int32_t)(uint32_t)(w >> 1);
	for (int k = 0; k < 2; k++) {
		r->how[k] = (uint8_t)(w >> (33 + 15 * k) & 3);
		int64_t o = (int64_t)(w >> (35 + 15 * k) & 0x1fff);
		r->off[k] = (o >= 4096 ? o - 8192 : o) * 8;
	}
}

/* A slot's rules when it holds pc's (key and check agree); false otherwise. */
static bool slot_get(struct rslot *s, uint64_t pc, uint64_t *v)
{
	uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
	*v = atomic_load_explicit(&s->val, memory_order_relaxed);
	uint64_t c = atomic_load_explicit(&s->check, memory_order_relaxed);
	return k == pc && c == (k ^ *v ^ RCHECK);
}

static void slot_put(struct rslot *s, uint64_t pc, uint64_t v)
{
	atomic_store_explicit(&s->key, pc, memory_order_relaxed);
	atomic_store_explicit(&s->val, v, memory_order_relaxed);
	atomic_store_explicit(&s->check, pc ^ v ^ RCHECK, memory_order_relaxed);
}

/*
 * And the rows this thread used, in front of the shared cache (struct isc_thread's
 * unwind_rows, 4 KiB): a sample of libtorch spent most of its native walk waiting for the
 * shared slots, one cache line and often one page of a 384 KiB table per frame, cold
 * after 10 ms of the program, and a thread's own rows come back sample after sample. Only
 * the thread writes them, in the handler or in an unwinding the handler stays out of
 * (t->in_unwind): never two writers at once, no check word.
 */
static bool rules_at(struct isc_thread *t, uint64_t pc, struct isc_cfi_rules *r, bool *known)
{
	enum { ROWS = sizeof(t->unwind_rows) / sizeof(t->unwind_rows[0]) };
	uint64_t *m = t ? t->unwind_rows[(pc ^ pc >> 7 ^ pc >> 14) % ROWS] : NULL;
	if (m && m[0] == pc) {
		unpack(m[1], r);
		*known = true;
		return true;
	}
	uint64_t v;
	if (slot_get(rslot_of(pc), pc, &v)) {
		unpack(v, r);
		*known = true;
	} else if (!isc_cfi_rules(pc, r, known)) {
		return false;
	} else if (pack(r, &v)) {
		slot_put(rslot_of(pc), pc, v);
	} else {
		return true; /* not one the caches hold */
	}
	if (m) {
		m[0] = pc;
		m[1] = v;
	}
	return true;
}

/* ---- the walk ---- */

/* One frame up: 1 stepped, 0 the outermost frame, -1 cannot. */
static int step(struct isc_thread *t, uint64_t look, uint64_t *sp, uint64_t *fp, bool *fp_ok,
		uint64_t *ra, uint64_t lo, uint64_t hi)
{
	struct isc_cfi_rules r;
	bool known;
	if (!rules_at(t, look, &r, &known)) {
		if (known || !*fp_ok || *fp < *sp || *fp % 8) {
			return -1;
		}
		/* no unwind table (JIT code): its frame pointer */
		uint64_t nfp;
		if (!load(*fp, lo, hi, &nfp) || !load(*fp + 8, lo, hi, ra) || *ra < PAGE) {
			return -1;
		}
		*sp = *fp + 16;
		*fp = nfp;
		return 1;
	}
	uint64_t cfa;
	if (r.cfa_reg == ISC_REG_SP) {
		cfa = *sp + (uint64_t)r.cfa_off;
	} else if (r.cfa_reg == ISC_REG_FP && *fp_ok) {
		cfa = *fp + (uint64_t)r.cfa_off;
	} else {
		return -1;
	}
	if (r.how[1] == ISC_UNDEF) {
		return 0;
	}
	if (r.how[1] != ISC_AT_CFA || cfa <= *sp || !load(cfa + (uint64_t)r.off[1], lo, hi, ra) ||
	    *ra < PAGE) {
		return -1;
	}
	if (r.how[0] == ISC_AT_CFA) {
		*fp_ok = load(cfa + (uint64_t)r.off[0], lo, hi, fp);
	} else if (r.how[0] != ISC_SAME) {
		*fp_ok = false;
	}
	*sp = cfa;
	return 1;
}

unsigned isc_unwind_cfi(const ucontext_t *uc, struct isc_thread *t, uint64_t *pcs, unsigned max,
			bool *complete)
{
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	uint64_t fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
	uint64_t lo, hi;
	bool fp_ok = true;
	*complete = false;
	if (max == 0 || !stack_range(t, sp, &lo, &hi)) {
		return 0;
	}
	unsigned n = 0;
	pcs[n++] = pc;
	uint64_t look = pc; /* the interrupted instruction itself; callers: the call */
	while (n < max) {
		uint64_t ra;
		int r = step(t, look, &sp, &fp, &fp_ok, &ra, lo, hi);
		if (r == 0) {
			*complete = true;
			break;
		}
		if (r < 0) {
			break;
		}
		pcs[n++] = ra;
		look = ra - 1;
	}
	*complete = *complete || n == max;
	return n;
}
