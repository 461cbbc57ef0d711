/* SPDX-License-Identifier: MIT */
/*
 * libsimgpu-vtime.so: virtual host time, so that a single-threaded workload on the
 * simulated GPU times the same on an idle machine and on a loaded one
 * (tests/simgpu/README.md, "Virtual host time").
 *
 * Preloaded first (LD_PRELOAD=libsimgpu-vtime.so:libinferscope.so), it interposes
 * clock_gettime(CLOCK_MONOTONIC), the clock that the simulator, the workloads and
 * InferScope all read, and the monotonic sleeps:
 *  - CLOCK_MONOTONIC reads the main thread's CPU time plus the time it slept, from the
 *    wall time at the first read on. Time the main thread spends runnable but not
 *    running (another process had the CPU) does not exist on this clock; CPU work (the
 *    workloads spin on CPU time, the simulator's launch costs spin on this clock) and
 *    the simulated device's times are what it measures.
 *  - A sleep of the main thread (clock_nanosleep, nanosleep on CLOCK_MONOTONIC: the
 *    simulator waiting for its device) returns at once and moves the clock forward by
 *    the time it would have slept. Other threads (InferScope's collector and samplers,
 *    the simulated CUPTI's worker) sleep for real; an absolute monotonic deadline is
 *    turned into the virtual time left.
 * Other clocks (CLOCK_REALTIME, CPU-time clocks) are the real ones. A workload whose
 * host work runs on several threads is not timed right by this clock (only the main
 * thread's CPU time advances it): the before/after pairs use single-threaded ones.
 */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define VT_EXPORT __attribute__((visibility("default")))

typedef int (*gettime_fn)(clockid_t, struct timespec *);
typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

/*
 * Reading a thread's CPU time is a system call (~2 us of CPU on a virtual machine), too
 * dear for every read: between two reads of it the clock follows the wall clock, at
 * most RESYNC_NS ahead of the last CPU-time read, and the main thread reads its CPU time
 * again once that much wall time has passed. A preemption therefore costs the clock at
 * most RESYNC_NS; the clock never goes back (a read after a preemption may find it
 * already past the CPU time: it stays where it was).
 */
#define RESYNC_NS 50000

static gettime_fn real_gettime;
static nanosleep_fn real_nanosleep;
static clock_nanosleep_fn real_clock_nanosleep;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static clockid_t main_cpu;
static pid_t main_tid;
static int64_t base;			    /* wall at the first read minus the main thread's CPU */
static _Atomic int64_t slept;		    /* what the main thread slept, virtually */
static _Atomic int64_t sync_wall, sync_cpu; /* the last CPU-time read, and when */
static _Atomic int64_t last;		    /* the latest time handed out */
static __thread int is_main = -1;

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000),
				  .tv_nsec = (long)(ns % 1000000000) };
}

static int sys_gettime(clockid_t c, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, c, ts);
}

static int64_t read_ns(clockid_t c)
{
	struct timespec ts;
	real_gettime(c, &ts);
	return ns_of(&ts);
}

/* The first read comes from a constructor, on the main thread (constructors run there). */
static void init(void)
{
	real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	real_nanosleep = (nanosleep_fn)dlsym(RTLD_NEXT, "nanosleep");
	real_clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
	if (real_gettime == NULL) {
		real_gettime = sys_gettime;
	}
	main_tid = (pid_t)syscall(SYS_gettid);
	if (pthread_getcpuclockid(pthread_self(), &main_cpu) != 0) {
		main_cpu = CLOCK_THREAD_CPUTIME_ID;
	}
	int64_t wall = read_ns(CLOCK_MONOTONIC), cpu = read_ns(main_cpu);
	base = wall - cpu;
	atomic_store(&sync_wall, wall);
	atomic_store(&sync_cpu, cpu);
}

static bool on_main(void)
{
	pthread_once(&once, init);
	if (is_main < 0) {
		is_main = (pid_t)syscall(SYS_gettid) == main_tid;
	}
	return is_main != 0;
}

static int64_t vnow(void)
{
	bool main_thread = on_main();
	int64_t wall = read_ns(CLOCK_MONOTONIC);
	int64_t sw = atomic_load_explicit(&sync_wall, memory_order_acquire);
	if (main_thread && wall - sw >= RESYNC_NS) {
		atomic_store_explicit(&sync_cpu, read_ns(main_cpu), memory_order_relaxed);
		atomic_store_explicit(&sync_wall, sw = wall, memory_order_release);
	}
	int64_t ahead = wall - sw < RESYNC_NS ? wall - sw : RESYNC_NS;
	int64_t v = base + atomic_load_explicit(&sync_cpu, memory_order_relaxed) +
		    (ahead > 0 ? ahead : 0) + atomic_load_explicit(&slept, memory_order_acquire);
	int64_t prev = atomic_load_explicit(&last, memory_order_relaxed);
	while (v > prev && !atomic_compare_exchange_weak(&last, &prev, v)) {
	}
	return v > prev ? v : prev;
}

VT_EXPORT int clock_gettime(clockid_t c, struct timespec *ts)
{
	pthread_once(&once, init);
	if (c != CLOCK_MONOTONIC) {
		return real_gettime(c, ts);
	}
	*ts = ts_of(vnow());
	return 0;
}

/* The main thread sleeps `d` ns: the clock moves on, nothing waits. */
static void skip(int64_t d)
{
	if (d > 0) {
		atomic_fetch_add_explicit(&slept, d, memory_order_release);
	}
}

VT_EXPORT int clock_nanosleep(clockid_t c, int flags, const struct timespec *req,
			      struct timespec *rem)
{
	pthread_once(&once, init);
	if (c != CLOCK_MONOTONIC || req == NULL) {
		return real_clock_nanosleep(c, flags, req, rem);
	}
	int64_t d = (flags & TIMER_ABSTIME) ? ns_of(req) - vnow() : ns_of(req);
	if (on_main()) {
		skip(d);
		return 0;
	}
	struct timespec rel = ts_of(d > 0 ? d : 0);
	return real_clock_nanosleep(CLOCK_MONOTONIC, 0, &rel, NULL);
}

VT_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	pthread_once(&once, init);
	if (req == NULL || !on_main()) {
		return real_nanosleep(req, rem);
	}
	if (req->tv_nsec < 0 || req->tv_nsec >= 1000000000 || req->tv_sec < 0) {
		errno = EINVAL;
		return -1;
	}
	skip(ns_of(req));
	return 0;
}
