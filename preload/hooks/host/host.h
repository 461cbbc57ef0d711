/* SPDX-License-Identifier: MIT */
/*
 * Host interposition: what the hook files of the host family share.
 *
 *   host.c          the family's first init, shared helpers (dlsym, thread attach)
 *   host-clock.c    the duration clock of the system-call hooks (TSC or ns)
 *   sampling.c      Poisson byte sampling arithmetic (no libm)
 *   hook-malloc.c   malloc family, bootstrap pool, sampling and large allocations
 *   hook-mmap.c     mmap, mmap64, munmap, mremap
 *   hook-syscalls.c the system-call machinery: aggregates, slow-call events, fd targets
 *   hook-io.c       read/write/pread/pwrite(v), recv and send calls, accept/connect
 *   hook-files.c    open/openat/close/fsync/fdatasync/ioctl
 *   hook-waits.c    poll/select/epoll, sleeps, contended mutexes, condvars, semaphores
 *   cpu-time.c      collector samplers: per-thread CPU time, live heap
 *   stacks.c        opt-in stacks through a dlopen'ed libunwind, symbolisation
 *   numa.c          NUMA node of a thread, page migrations of the process
 *
 * The system-call fast path is here, inline: a hook that returns quickly must cost
 * two clock reads and one aggregate update (DESIGN §7: at most 40 ns added).
 */
#ifndef ISC_HOST_H
#define ISC_HOST_H

#include <errno.h>
#include <stdbool.h>
#include <x86intrin.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "preload/samplers/samplers.h"
#include "common/clock.h"
#include "preload/core/collector.h"
#include "format/record.h"

/* ---- family inits (lifecycle.c, families[]) ---- */
void isc_hooks_malloc_init(void);   /* malloc family and mappings */
void isc_hooks_syscalls_init(void); /* system calls and waits */
/* fork child: the counters start over, they describe the child's own life. */
void isc_hooks_malloc_fork_child(void);
void isc_hooks_syscalls_fork_child(void);

/*
 * Attaches the calling thread (guard raised) and notes its NUMA node; NULL when
 * the library is not recording or the thread slab is full. With may_start, in the
 * process the user started, it also starts the collector if it is not running yet:
 * the CPU-time samples must cover the run from its start, not from the first event.
 * Only hooks that run on the application's side of a call may pass true (see
 * isc_host_may_start_collector()).
 */
struct isc_thread *isc_host_attach(bool may_start);
/* The collector's restart after a fork's quiet period, from a hooked call (guarded). */
void isc_host_resume_collector(void);

/* Events the host hooks recorded on thread t (memory and system-call events): a
 * process with nothing else did no work of its own (isc_session_did_work). */
uint64_t isc_host_events(const struct isc_thread *t);

/* dlsym(RTLD_NEXT, name) with the guard raised (dlsym may allocate); the _v form
 * asks for a symbol version first (dlvsym), then any. */
void *isc_host_next(const char *name);
void *isc_host_next_v(const char *name, const char *version);

/* Real functions of each hook file, resolved from the family inits and, for a hook
 * that runs before the constructor, on first use (mappings: never lazily). */
void isc_hooks_mmap_resolve(void);
void isc_hooks_io_resolve(void);
void isc_hooks_files_resolve(void);
void isc_hooks_waits_resolve(void);

/*
 * The first event of a process takes the first chunk, which starts the collector
 * thread, and pthread_create allocates. Hooks that run inside an allocator - lock
 * waits (jemalloc's mutexes) and mappings (any allocator's mmap) - must not be that
 * event, or the allocator is re-entered under its own lock: they record only once
 * the collector runs, and count (exactly) meanwhile. The malloc family and I/O
 * record from the application's side of the call and may start it.
 */
static inline bool isc_host_may_start_collector(void)
{
	return isc_collector_running();
}

/* ---- memory events (hook-malloc.c) ---- */
void isc_host_record_memory(struct isc_thread *t, unsigned op, const void *ptr, uint64_t bytes,
			    uint64_t weight);

/* Mappings at least this large are recorded (0 with INFERSCOPE_MALLOC_SAMPLE=0). */
extern uint64_t isc_host_map_threshold;
extern bool isc_host_malloc_on;

/* ---- system calls (hook-syscalls.c) ---- */

/* One aggregate slot per call name; the order is the table's in hook-syscalls.c. */
enum isc_sc {
	/* io */
	ISC_SC_READ,
	ISC_SC_WRITE,
	ISC_SC_PREAD,
	ISC_SC_PWRITE,
	ISC_SC_READV,
	ISC_SC_WRITEV,
	ISC_SC_PREADV,
	ISC_SC_PWRITEV,
	ISC_SC_PREADV2,
	ISC_SC_PWRITEV2,
	/* net */
	ISC_SC_RECV,
	ISC_SC_RECVFROM,
	ISC_SC_RECVMSG,
	ISC_SC_RECVMMSG,
	ISC_SC_SEND,
	ISC_SC_SENDTO,
	ISC_SC_SENDMSG,
	ISC_SC_SENDMMSG,
	ISC_SC_ACCEPT,
	ISC_SC_ACCEPT4,
	ISC_SC_CONNECT,
	/* wait */
	ISC_SC_POLL,
	ISC_SC_PPOLL,
	ISC_SC_SELECT,
	ISC_SC_PSELECT,
	ISC_SC_EPOLL_WAIT,
	ISC_SC_EPOLL_PWAIT,
	ISC_SC_MUTEX_LOCK,
	ISC_SC_COND_WAIT,
	ISC_SC_COND_TIMEDWAIT,
	ISC_SC_COND_CLOCKWAIT,
	ISC_SC_SEM_WAIT,
	ISC_SC_SEM_TIMEDWAIT,
	ISC_SC_SEM_CLOCKWAIT,
	ISC_SC_WAIT, /* a child's end */
	ISC_SC_WAIT3,
	ISC_SC_WAIT4,
	ISC_SC_WAITPID,
	ISC_SC_WAITID,
	/* sleep */
	ISC_SC_NANOSLEEP,
	ISC_SC_CLOCK_NANOSLEEP,
	ISC_SC_USLEEP,
	ISC_SC_SLEEP,
	/* fs, driver */
	ISC_SC_OPEN,
	ISC_SC_OPENAT,
	ISC_SC_CLOSE,
	ISC_SC_FSYNC,
	ISC_SC_FDATASYNC,
	ISC_SC_IOCTL,
	ISC_SC_IOCTL_NVIDIA,
	ISC_SC__COUNT
};

_Static_assert(ISC_SC__COUNT <= ISC_SYSCALL_SLOTS, "thread.h has a slot per call name");

struct isc_sys_desc {
	const char *name; /* aggregate key and event name */
	int16_t nr;	  /* x86-64 syscall number, -1 for futex-based waits */
	uint8_t category; /* enum isc_sys_category */
};

extern const struct isc_sys_desc isc_sys_table[ISC_SC__COUNT];

/* Read on every call: one cache line. Durations are measured in "units" of the
 * duration clock: TSC cycles where the TSC is invariant and trusted, else ns
 * (host-clock.c); threshold and capture window are kept in the same units. */
struct isc_sys_hot {
	bool on;
	bool tsc;
	uint64_t threshold;   /* INFERSCOPE_SYSCALL_THRESHOLD in units */
	uint64_t mult;	      /* ns per unit, 32.32 fixed point */
	uint64_t from, until; /* the capture window in units */
};
extern struct isc_sys_hot isc_sys;

void isc_host_clock_init(void);
uint64_t isc_sys_units_to_ns(uint64_t units);

static inline uint64_t isc_sys_clock(void)
{
	return isc_sys.tsc ? __rdtsc() : isc_now();
}

struct isc_sys_call {
	struct isc_thread *t;
	uint64_t t0;
	unsigned sc;
};

/* True when this call is to be measured: recording on, guard down, thread known. */
static inline bool isc_sys_begin(struct isc_sys_call *c, unsigned sc)
{
	if (__builtin_expect(!isc_sys.on || isc_tls_guard != 0, 0)) {
		return false;
	}
	if (__builtin_expect(atomic_load_explicit(&isc_collector_paused, memory_order_relaxed),
			     0)) {
		isc_host_resume_collector(); /* paused around a fork (collector.h) */
	}
	struct isc_thread *t = isc_tls_self;
	if (__builtin_expect(t == NULL, 0) &&
	    (t = isc_host_attach(isc_sys_table[sc].nr >= 0)) == NULL) {
		return false;
	}
	c->t = t;
	c->sc = sc;
	c->t0 = isc_sys_clock();
	return true;
}

/*
 * The histogram bucket of a duration in clock units: HDR-style, the power of two and the
 * two bits below the leading one, so a bucket is at most a quarter of its lower bound
 * wide. Bucket b >= 4 holds [(4 + b % 4) << (b / 4 - 1), (5 + b % 4) << (b / 4 - 1));
 * buckets 0..3 hold the durations 0..3. One clz, one shift.
 */
static inline unsigned isc_hist_bucket(uint64_t units, unsigned buckets)
{
	if (units < 4) {
		return (unsigned)units;
	}
	unsigned msb = 63u - (unsigned)__builtin_clzll(units);
	unsigned b = 4 * (msb - 1) + (unsigned)((units >> (msb - 2)) & 3);
	return b < buckets ? b : buckets - 1;
}

static inline unsigned isc_sys_bucket(uint64_t units)
{
	return isc_hist_bucket(units, ISC_SYSCALL_HIST);
}

/* The lower bound in clock units of bucket b (isc_sys_bucket); b = ISC_SYSCALL_HIST gives
 * the upper bound of the last one's regular range. */
static inline uint64_t isc_sys_bucket_low(unsigned b)
{
	return b < 4 ? b : (uint64_t)(4 + b % 4) << (b / 4 - 1);
}

/* The histogram of a call name on its thread, at its first call (errno kept); NULL when
 * the library's arena has no memory left (the call is counted, not bucketed). */
uint64_t *isc_sys_hist_new(struct isc_syscall_agg *a);

/* Slow path: records the call as a cpu_syscall event (errno kept); dur in units. */
void isc_sys_record(const struct isc_sys_call *c, uint64_t dur, int fd, uint64_t bytes, int64_t ret,
		    int err);

/*
 * After the real call: fd (-1 none), bytes requested, bytes moved, raw result, and
 * err (the errno or error code of a failed call, 0 on success). Never touches errno.
 */
static inline void isc_sys_end(const struct isc_sys_call *c, int fd, uint64_t bytes, uint64_t moved,
			       int64_t ret, int err)
{
	uint64_t dur = isc_sys_clock() - c->t0;
	if (!atomic_load_explicit(&isc_capture.on, memory_order_relaxed) || c->t0 < isc_sys.from ||
	    c->t0 >= isc_sys.until) {
		return;
	}
	struct isc_syscall_agg *a = &c->t->syscalls[c->sc];
	a->count++;
	a->total += dur;
	a->max = dur > a->max ? dur : a->max;
	a->bytes += moved;
	a->errors += err != 0;
	uint64_t *h = a->hist;
	if (__builtin_expect(h == NULL, 0)) {
		h = isc_sys_hist_new(a);
	}
	if (__builtin_expect(h != NULL, 1)) {
		h[isc_sys_bucket(dur)]++;
	}
	if (__builtin_expect(dur >= isc_sys.threshold, 0)) {
		isc_sys_record(c, dur, fd, bytes, ret, err);
	}
}

/* errno of a call that returns -1 on failure, read without changing it. */
static inline int isc_sys_err(int64_t ret)
{
	return ret < 0 ? errno : 0;
}

/* ---- fd targets (hook-syscalls.c) ---- */
void isc_fd_opened(int fd, const char *path); /* open/openat/accept results */
void isc_fd_closed(int fd);
bool isc_fd_is_nvidia(int fd); /* cached; classifies on first sight */
/* Pure: ISC_FD_NVIDIA for a /dev/nvidia* path, else ISC_FD_UNKNOWN. */
unsigned isc_fd_target_of_path(const char *path);
/* What an fd is now (fstat; /proc/self/fd for character devices). */
unsigned isc_fd_target(int fd);

#endif /* ISC_HOST_H */
