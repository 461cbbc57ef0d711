/* SPDX-License-Identifier: MIT */
/*
 * Native stacks from a signal context, async-signal-safely.
 *
 * libunwind's local unwinder is used where it can be loaded: it follows DWARF CFI
 * (.eh_frame), so it gets through code built without frame pointers - Debian's and
 * pyenv's CPython, most of libc. It is dlopen'ed RTLD_LOCAL, never linked (see
 * hooks/stacks.c: in the global scope it would take over the host's C++ exceptions),
 * and loaded from the constructor. unw_init_local2(UNW_INIT_SIGNAL_FRAME) starts at
 * the interrupted instruction; libunwind validates addresses (msync) before it
 * dereferences anything it had to guess. Its global cache is guarded
 * with a mutex: the handler never runs libunwind on a thread that is inside it (our
 * own event stacks mark the thread), and hooks are off while it runs, so that its
 * mutex is not mistaken for the program's.
 *
 * Without libunwind, frame pointers: the rbp chain from the interrupted context, each
 * frame read through isc_safe_read (process_vm_readv on ourselves, which returns
 * EFAULT instead of faulting), frames required to grow towards the stack's base and to
 * stay within 8 MiB of the interrupted stack pointer.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "preload/core/guard.h"
#include "preload/samplers/cpu-sampler.h"

/* libunwind's ABI on x86-64 (libunwind-x86_64.h), without its headers. */
#define UNW_CURSOR_WORDS 127
#define UNW_INIT_SIGNAL_FRAME 1
#define UNW_X86_64_RIP 16

struct unw_cursor {
	uint64_t opaque[UNW_CURSOR_WORDS];
};

static struct {
	int (*backtrace)(void **, int);
	int (*init_local2)(struct unw_cursor *, ucontext_t *, int);
	int (*step)(struct unw_cursor *);
	int (*get_reg)(struct unw_cursor *, int, uint64_t *);
} unw;

static int self_pid;
static _Atomic uint64_t fallbacks; /* stacks libunwind unwound: the tables could not */
static bool shared_with_program;   /* the program loaded libunwind.so.8 itself */
static _Atomic int active;	   /* threads inside libunwind right now */

void isc_unwind_enter(void)
{
	atomic_fetch_add_explicit(&active, 1, memory_order_acq_rel);
}

void isc_unwind_leave(void)
{
	atomic_fetch_sub_explicit(&active, 1, memory_order_acq_rel);
}

void isc_unwind_fork_child(void)
{
	/* The validated reads name a process: the parent, alive and sharing this one's
	 * addresses, would answer them with its own memory (its stacks, its frames) and
	 * never with ESRCH. */
	self_pid = (int)syscall(SYS_getpid);
	/* a thread of the parent was inside libunwind, perhaps holding its mutex: the
	 * child, which has only the forking thread, unwinds by frame pointers */
	if (atomic_exchange(&active, 0) != 0) {
		memset(&unw, 0, sizeof(unw));
	}
}
static int safe_read_state;	   /* 0 unknown, 1 works, -1 does not */
static uintptr_t self_lo, self_hi; /* this library's code: its frames are left out */

void isc_unwind_init(void)
{
	static bool done; /* from the constructor: the stacks family, then the sampler */
	if (done) {
		return;
	}
	done = true;
	self_pid = (int)syscall(SYS_getpid);
	isc_self_code(&self_lo, &self_hi);
	/* Loaded already: the program unwinds with it, and a sample taken while one of
	 * its threads holds libunwind's lock must not wait for that lock. */
	shared_with_program = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_NOLOAD) != NULL;
	/* Opt-in: libunwind's first use opens a pipe (its memory validation writes through
	 * it) in the descriptor table the program sees and may close or reuse. */
	if (!isc_config.libunwind) {
		return;
	}
	void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
	if (h == NULL) {
		isc_info("CPU samples: libunwind.so.8 not found; native stacks from frame "
			 "pointers only");
		return;
	}
	unw.init_local2 =
		(int (*)(struct unw_cursor *, ucontext_t *, int))dlsym(h, "_ULx86_64_init_local2");
	unw.step = (int (*)(struct unw_cursor *))dlsym(h, "_ULx86_64_step");
	unw.get_reg = (int (*)(struct unw_cursor *, int, uint64_t *))dlsym(h, "_ULx86_64_get_reg");
	unw.backtrace = (int (*)(void **, int))dlsym(h, "unw_backtrace");
	if (!unw.init_local2 || !unw.step || !unw.get_reg) {
		memset(&unw, 0, sizeof(unw));
	}
}

uint64_t isc_unwind_fallbacks(void)
{
	return atomic_load_explicit(&fallbacks, memory_order_relaxed);
}

bool isc_unwind_have_libunwind(void)
{
	return unw.step != NULL;
}

size_t isc_safe_read(void *dst, uint64_t addr, size_t n)
{
	if (addr < 4096 || safe_read_state < 0) {
		return 0;
	}
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)addr, n };
	/* the pid of the process the library was loaded in: a fork child re-reads it */
	long r = syscall(SYS_process_vm_readv, self_pid, &local, 1, &remote, 1, 0);
	if (r < 0 && errno == ESRCH) {
		self_pid = (int)syscall(SYS_getpid);
		r = syscall(SYS_process_vm_readv, self_pid, &local, 1, &remote, 1, 0);
	}
	if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
		safe_read_state = -1; /* a seccomp filter: no validated reads here */
		return 0;
	}
	return r < 0 ? 0 : (size_t)r;
}

size_t isc_safe_readv(const struct iovec *local, const struct iovec *remote, unsigned n)
{
	if (safe_read_state < 0) {
		return 0;
	}
	long r = syscall(SYS_process_vm_readv, self_pid, local, n, remote, n, 0);
	if (r < 0 && errno == ESRCH) {
		self_pid = (int)syscall(SYS_getpid);
		r = syscall(SYS_process_vm_readv, self_pid, local, n, remote, n, 0);
	}
	return r < 0 ? 0 : (size_t)r;
}

bool isc_safe_read_ok(void)
{
	if (safe_read_state == 0) {
		int saved = errno;
		uint64_t v = 0, probe = 0x1234;
		safe_read_state =
			isc_safe_read(&v, (uintptr_t)&probe, 8) == 8 && v == probe ? 1 : -1;
		errno = saved;
	}
	return safe_read_state > 0;
}

static unsigned frame_pointers(const ucontext_t *uc, uint64_t *pcs, unsigned max)
{
	uint64_t sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	uint64_t fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
	unsigned n = 0;
	pcs[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	while (n < max && fp >= sp && fp < sp + (8u << 20) && fp % 8 == 0) {
		uint64_t w[2]; /* saved rbp, return address */
		if (isc_safe_read(w, fp, sizeof(w)) != sizeof(w) || w[1] < 4096) {
			break;
		}
		pcs[n++] = w[1];
		if (w[0] <= fp) {
			break; /* frames grow towards the base: anything else is not a chain */
		}
		sp = fp;
		fp = w[0];
	}
	return n;
}

unsigned isc_unwind_signal(const ucontext_t *uc, uint64_t *pcs, unsigned max, bool in_handler)
{
	if (max == 0) {
		return 0;
	}
	/* the modules' unwind tables first: no lock, no system call per frame */
	bool complete;
	unsigned n = isc_unwind_cfi(uc, isc_tls_self, pcs, max, &complete);
	if (complete) {
		return n;
	}
	if (unw.step == NULL || (in_handler && shared_with_program)) {
		return n > 0 ? n : frame_pointers(uc, pcs, max);
	}
	struct unw_cursor c;
	isc_unwind_enter();
	/* libunwind reads the context only; the cast drops const for its prototype */
	if (unw.init_local2(&c, (ucontext_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
		isc_unwind_leave();
		return n > 0 ? n : frame_pointers(uc, pcs, max);
	}
	unsigned k = 0;
	do {
		uint64_t ip;
		if (unw.get_reg(&c, UNW_X86_64_RIP, &ip) < 0 || ip == 0) {
			break;
		}
		pcs[k++] = ip;
	} while (k < max && unw.step(&c) > 0);
	isc_unwind_leave();
	atomic_fetch_add_explicit(&fallbacks, 1, memory_order_relaxed);
	return k > n ? k : n;
}

unsigned isc_unwind_here(uint64_t *pcs, unsigned max)
{
	ucontext_t uc;
	/* getcontext returns twice in principle (setcontext): volatile keeps them honest */
	volatile unsigned n = 0, skip = 0, cap = max;
	if (getcontext(&uc) == 0) {
		n = isc_unwind_signal(&uc, pcs, cap, false);
	}
	while (skip < n && pcs[skip] >= self_lo && pcs[skip] < self_hi) {
		skip++; /* our own frames: the hook and the recorder */
	}
	memmove(pcs, pcs + skip, (n - skip) * sizeof(*pcs));
	return n - skip;
}
