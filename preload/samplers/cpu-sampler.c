/* SPDX-License-Identifier: MIT */
/*
 * CPU sampling: every thread on its own CPU-time clock (INFERSCOPE_CPU_SAMPLE Hz).
 *
 * Signal: a real-time signal the program leaves at SIG_DFL, from SIGRTMIN+4 up
 * (glibc keeps SIGRTMIN..+2 for itself, programs that use real-time signals start at
 * the bottom), chosen and installed by lifecycle.c, which registers every handler of
 * the library. SIGPROF and SIGALRM stay the program's. Should the program later put
 * a handler on ours, the collector sees it at its next tick, deletes every timer and
 * counts it (trace_metadata.sampling.stepped_aside): our signals stop, its handler
 * stays.
 *
 * Timers: one POSIX timer per thread on that thread's CPU clock, delivering to that
 * thread (SIGEV_THREAD_ID), created with raw system calls. The main thread's is
 * created when the library starts - a CPU-bound program may never call anything we
 * hook; other threads' by the collector, for every thread that recorded an event and
 * every thread it finds in /proc/self/task. A thread that only waits never consumes
 * CPU time, so its timer never fires: sampling costs nothing while a program blocks.
 * Since Linux 5.11 (POSIX_CPU_TIMERS_TASK_WORK) an expired CPU timer's signal is
 * generated on the way back to user space, after the system call that consumed the
 * time has finished, so it cannot interrupt that call; SA_RESTART covers the rest.
 *
 * The kernel checks CPU timers only at its scheduler tick, for the thread running then: a
 * thread that computes in bursts between blocking calls is sampled by its blocking calls
 * instead (isc_sampler_catch_up, from the slow path of the system-call hooks).
 *
 * Handler: errno saved and restored; the stack into the thread's sample chunk
 * (buffer.h), never into the chunk the interrupted code may be writing. Weight: the
 * timer's period for each expiry the signal stands for (one plus its overrun count, from
 * the siginfo): no system call. The thread's CPU clock is a system call on Linux, not
 * the vDSO, and read only at a timer's first sample and at a catch-up (below).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "common/clock.h"
#include "preload/core/collector.h"
#include "preload/core/procfs.h"
#include "preload/core/threads.h"
#include "common/config.h"
#include "preload/hooks/host/host.h"
#include "common/log.h"
#include "preload/samplers/cpu-sampler.h"
#include "format/json-writer.h"

#define TIMERS 4096
#define SCAN_EVERY 10 /* ticks between /proc/self/task scans */

struct timer_slot {
	uint32_t tid; /* 0 = free */
	int id;	      /* kernel timer id; -1: none, the thread blocks our signal */
	bool counted; /* counted in blocked_threads */
};

static int sig;	    /* 0: sampling off */
static bool wanted; /* configured on: lifecycle.c installs the handler */
static uint64_t period_ns;
static struct timer_slot timers[TIMERS]; /* the collector's (and fork child's) */
static unsigned n_timers;
static uint64_t ticks;
static bool stepped_aside;
static uint64_t timer_failures;
static uint64_t blocked_threads;     /* threads seen blocking our signal: not sampled then */
static _Atomic uint64_t clock_reads; /* by the handler (trace_metadata.sampling) */
/* The table's lock: the collector's scans and a thread changing its own signal mask
 * (isc_sampler_mask_*) take turns, so that no timer is ever armed for a thread that
 * blocks its signal (a signal pending there would reach the program's signalfd or
 * sigwaitinfo). Never taken by the signal handler. */
static _Atomic int table_lock;

static void lock_table(void)
{
	while (atomic_exchange_explicit(&table_lock, 1, memory_order_acquire)) {
		sched_yield();
	}
}

static void unlock_table(void)
{
	atomic_store_explicit(&table_lock, 0, memory_order_release);
}

int isc_sampler_signal(void)
{
	return sig;
}

static clockid_t thread_clock(uint32_t tid)
{
	return (clockid_t)((~(unsigned)tid) << 3) | 6; /* CPUCLOCK_SCHED of a thread */
}

static uint64_t cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the handler ---- */

static void fill_words(struct isc_event *recs, uint32_t tid, const uint64_t *w, unsigned n)
{
	isc_stacks_fill(recs, tid, w, n);
}

/* One sample: its record and its stack (native words, then Python pairs) in the thread's
 * sample chunk; counted lost when the memory cap leaves no room. */
static void write_sample(struct isc_thread *t, uint64_t now, uint64_t weight, uint64_t overrun,
			 const uint64_t *w, unsigned native, unsigned py, uint16_t status)
{
	unsigned words = native + 2 * py;
	unsigned n = 1 + isc_stack_records(words);
	struct isc_event *e = isc_event_reserve_sample(t, n);
	if (e == NULL) {
		t->samples_lost++;
		return;
	}
	memset(e, 0, sizeof(*e));
	e->ts = now;
	e->dur = weight;
	e->tid = t->tid;
	e->kind = ISC_EV_CPU_SAMPLE;
	e->u.sample.overrun = overrun;
	e->u.sample.native = (uint16_t)native;
	e->u.sample.python = (uint16_t)py;
	e->u.sample.status = status;
	fill_words(e + 1, t->tid, w, words);
	isc_event_commit_sample(t, n);
	t->samples++;
}

static void account(struct isc_thread *t, uint64_t ns, uint64_t py_ns)
{
	t->sample_ns += ns;
	t->sample_py_ns += py_ns;
	t->sample_hist[0][isc_hist_bucket(ns, ISC_SAMPLE_HIST)]++;
	t->sample_hist[1][isc_hist_bucket(py_ns, ISC_SAMPLE_HIST)]++;
}

/* The Python walk and its duration; a process without an interpreter (isc_py_walk returns
 * at once) reads no clock for it: two clock reads were a tenth of a C program's sample. */
static unsigned py_walk_timed(struct isc_thread *t, uint64_t *w, uint16_t *status, uint64_t *ns)
{
	if (!isc_py_present()) {
		*status = ISC_PY_NONE;
		return 0;
	}
	uint64_t py0 = isc_now();
	unsigned py = isc_py_walk(t, w, ISC_SAMPLE_PY_MAX, status);
	*ns = isc_now() - py0;
	return py;
}

void isc_samplers_on_signal(int s, siginfo_t *si, void *ucv)
{
	int saved = errno;
	(void)s;
	struct isc_thread *t = isc_tls_self;
	bool fresh = false;
	if (t == NULL && isc_tls_guard == 0 && isc_core_ready()) {
		isc_tls_guard++;
		t = isc_thread_attach(); /* a thread the collector found in /proc */
		isc_tls_guard--;
		fresh = t != NULL; /* its first sample weighs what its timer counted */
	}
	if (t == NULL || si->si_code != SI_TIMER) {
		errno = saved;
		return;
	}
	/* the CPU time this signal stands for: the timer's expiries since its previous one */
	uint64_t due = period_ns * (1 + (unsigned)si->si_overrun);
	if (t->in_unwind || t->py_skip) {
		/* interrupted our own unwinding (libunwind is not re-entrant) or a catch-up
		 * sample: the CPU time stays owed to the next sample */
		t->samples_lost++;
		if (t->sample_cpu_ns) {
			t->sample_cpu_ns += due;
			t->sample_owed_ns += due;
		}
		errno = saved;
		return;
	}
	/* The baseline of the catch-up samples: the CPU time the samples weighed so far. The
	 * first sample of a timer (a thread's first, or after the thread unblocked our signal)
	 * reads the CPU clock for it (a system call, once a timer), before the handler's own
	 * account starts: a system call is where a loaded machine preempts, and that wait is
	 * not our cost. It weighs the CPU time since the baseline, as the timer was armed after
	 * the thread started. From then on the expiries add their periods, and a catch-up,
	 * which reads the clock, re-arms the timer from there. */
	uint64_t weight = due + t->sample_owed_ns;
	if (fresh || t->sample_cpu_ns == 0 || t->sample_timer != si->si_timerid + 1) {
		uint64_t cpu = cpu_now(), weighed = t->sample_cpu_ns - t->sample_owed_ns;
		atomic_fetch_add_explicit(&clock_reads, 1, memory_order_relaxed);
		weight = !fresh && t->sample_cpu_ns && cpu > weighed ? cpu - weighed : due;
		t->sample_cpu_ns = cpu;
		t->sample_timer = si->si_timerid + 1;
	} else {
		t->sample_cpu_ns += due;
	}
	t->sample_owed_ns = 0;
	uint64_t now = isc_now();
	t->sample_wall_ns = now;
	if (!isc_capturing_signal_safe(now)) {
		errno = saved;
		return;
	}
	t->py_skip = 1;
	/* libunwind may take a mutex: our own pthread_mutex_lock hook must not see it */
	isc_tls_guard++;
	uint64_t w[ISC_SAMPLE_NATIVE_MAX + 2 * ISC_SAMPLE_PY_MAX];
	unsigned native = isc_unwind_signal(ucv, w, ISC_SAMPLE_NATIVE_MAX, true);
	uint16_t status;
	uint64_t py_ns = 0;
	unsigned py = py_walk_timed(t, w + native, &status, &py_ns);
	write_sample(t, now, weight, (uint64_t)si->si_overrun, w, native, py, status);
	account(t, isc_now() - now, py_ns); /* the handler's own cost, for the trace */
	isc_tls_guard--;
	t->py_skip = 0;
	errno = saved;
}

/*
 * The CPU-time timer is checked by the kernel only at its scheduler tick (250 Hz here),
 * and only for the thread running at that tick: a thread that computes in bursts shorter
 * than a tick between blocking calls - a request handler waking for each request, threads
 * taking the GIL in turns - is seldom running at a tick, its timer expires late or never,
 * and its CPU time is missing or carried by one heavy sample. So a blocking call takes the
 * sample the timer owes: when the thread leaves the CPU with a period or more of CPU time
 * since its previous sample, it is sampled there, at the call that ends the burst, with
 * that CPU time as the weight. The timer keeps sampling long runs as before.
 *
 * The timer's samples weigh a period per expiry, counted from its arming; a catch-up
 * weighs the clock's reading since the CPU time the samples reached, and re-arms the
 * timer to expire a period after that reading (absolute, on the thread's own clock), so
 * that its next expiry counts from where the catch-up stopped: no CPU time is weighed
 * twice or left out.
 */
/* A thread that blocks our signal is not sampled (its timer is gone, the trace counts it
 * among the unsampled): the catch-up leaves it alone too. The mask is read raw, past the
 * mask hooks. */
static bool masks_our_signal(void)
{
	sigset_t cur;
	return syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, sizeof(long)) == 0 &&
	       sigismember(&cur, sig) == 1;
}

static int timer_rearm(int id, uint64_t at_cpu_ns);
static struct timer_slot *slot_of(uint32_t tid, bool add);

void isc_sampler_catch_up(struct isc_thread *t)
{
	if (sig == 0 || stepped_aside || t->in_unwind || t->py_skip || t->sample_cpu_ns == 0) {
		return;
	}
	/* A thread's CPU time grows no faster than the wall clock: less than a period since
	 * the previous sample (whose wall time is read just after its CPU time, a few
	 * nanoseconds of CPU later), no sample is owed, and the CPU clock (a system call, not
	 * the vDSO) is not read. */
	if (isc_now() - t->sample_wall_ns < period_ns) {
		return;
	}
	/* the timer table, for this thread's timer id; taken by the collector or the mask
	 * hooks: the sample stays owed to the next call */
	if (atomic_exchange_explicit(&table_lock, 1, memory_order_acquire)) {
		return;
	}
	t->in_unwind++; /* the handler steps aside: no sample lands in ours */
	uint64_t cpu = cpu_now();
	uint64_t weighed = t->sample_cpu_ns - t->sample_owed_ns;
	bool owed = cpu >= t->sample_cpu_ns + period_ns && !masks_our_signal();
	struct timer_slot *s = owed ? slot_of(t->tid, false) : NULL;
	if (s != NULL && s->id >= 0) {
		timer_rearm(s->id, cpu + period_ns);
	}
	unlock_table();
	if (owed) {
		uint64_t now = isc_now(), weight = cpu - weighed;
		isc_tls_guard++;
		uint64_t w[ISC_SAMPLE_NATIVE_MAX + 2 * ISC_SAMPLE_PY_MAX];
		unsigned native = isc_unwind_here(w, ISC_SAMPLE_NATIVE_MAX);
		uint16_t status;
		uint64_t py_ns = 0;
		unsigned py = py_walk_timed(t, w + native, &status, &py_ns);
		write_sample(t, now, weight, 0, w, native, py, status);
		account(t, isc_now() - now, py_ns);
		isc_tls_guard--;
		/* after the re-arm: an expiry the handler skipped meanwhile is in this weight */
		t->sample_cpu_ns = cpu;
		t->sample_owed_ns = 0;
		t->sample_wall_ns = now;
	}
	t->in_unwind--;
}

/* ---- timers ---- */

/* Timer id to expire at the thread's CPU time at_cpu_ns, then every period. */
static int timer_rearm(int id, uint64_t at_cpu_ns)
{
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
	its.it_value.tv_sec = (time_t)(at_cpu_ns / 1000000000u);
	its.it_value.tv_nsec = (long)(at_cpu_ns % 1000000000u);
	return (int)syscall(SYS_timer_settime, id, TIMER_ABSTIME, &its, NULL);
}

static int timer_start(uint32_t tid, clockid_t clock)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev._sigev_un._tid = (pid_t)tid;
	int id = -1;
	if (syscall(SYS_timer_create, clock, &sev, &id) != 0) {
		return -errno;
	}
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (syscall(SYS_timer_settime, id, 0, &its, NULL) != 0) {
		int err = errno;
		syscall(SYS_timer_delete, id);
		return -err;
	}
	return id;
}

static struct timer_slot *slot_of(uint32_t tid, bool add)
{
	struct timer_slot *free_slot = NULL;
	for (unsigned i = 0; i < n_timers; i++) {
		if (timers[i].tid == tid) {
			return &timers[i];
		}
		if (timers[i].tid == 0 && free_slot == NULL) {
			free_slot = &timers[i];
		}
	}
	if (!add) {
		return NULL;
	}
	if (free_slot == NULL && n_timers < TIMERS) {
		free_slot = &timers[n_timers++];
	}
	return free_slot;
}

/* Does thread tid block our signal now? Its mask, from /proc (or its own, for self). */
static bool blocks_signal(uint32_t tid, bool self)
{
	if (self) {
		sigset_t cur;
		return pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, sig) == 1;
	}
	char path[64], buf[2048];
	isc_fmt(path, sizeof(path), "/proc/self/task/%u/status", tid);
	if (isc_slurp(path, buf, sizeof(buf)) == 0) {
		return true; /* gone, or unreadable: never arm blind */
	}
	const char *p = strstr(buf, "\nSigBlk:");
	if (p == NULL) {
		return true;
	}
	unsigned long long mask = strtoull(p + 8, NULL, 16);
	return (mask >> (sig - 1)) & 1;
}

/* counted: the collector saw it blocked (a thread that blocks the signal only around a
 * critical section, as CPython does around a fork, is not counted) */
static void mark_blocked(struct timer_slot *s, uint32_t tid, bool count)
{
	s->tid = tid;
	s->id = -1;
	if (count && !s->counted) {
		s->counted = true;
		blocked_threads++;
	}
}

/* Starts sampling thread tid (self: its own clock id) unless it already is sampled or
 * blocks the signal; the table is locked. */
static void ensure_timer_locked(uint32_t tid, bool self)
{
	struct timer_slot *s = slot_of(tid, false);
	if (sig == 0 || stepped_aside || (s != NULL && s->id >= 0)) {
		return;
	}
	s = s ? s : slot_of(tid, true);
	if (s == NULL) {
		return;
	}
	if (blocks_signal(tid, self)) {
		mark_blocked(s, tid, true);
		return;
	}
	int id = timer_start(tid, self ? CLOCK_THREAD_CPUTIME_ID : thread_clock(tid));
	if (id < 0) {
		/* a fresh slot stays free (tid 0); a blocked thread's stays blocked */
		timer_failures += id != -EINVAL && id != -ESRCH; /* EINVAL/ESRCH: it exited */
		return;
	}
	s->tid = tid;
	s->id = id;
}

static void ensure_timer(uint32_t tid, bool self)
{
	lock_table();
	ensure_timer_locked(tid, self);
	unlock_table();
}

/* A thread that blocked the signal by a raw system call (no hook saw it): its timer
 * goes, and with it a signal already pending there (timer_delete dequeues it). */
static void recheck_locked(struct timer_slot *s)
{
	if (s->id >= 0 && blocks_signal(s->tid, false)) {
		syscall(SYS_timer_delete, s->id);
		mark_blocked(s, s->tid, true);
	} else if (s->id < 0) {
		ensure_timer_locked(s->tid, false); /* unblocked since */
	}
}

/* ---- the program changes its signal mask (hooks/host: sigprocmask, pthread_sigmask) ---- */

bool isc_sampler_mask_begin(int how, const sigset_t *set)
{
	if (sig == 0 || stepped_aside || set == NULL || isc_tls_guard != 0) {
		return false;
	}
	bool blocks = (how == SIG_BLOCK || how == SIG_SETMASK) && sigismember(set, sig) == 1;
	lock_table();
	struct timer_slot *s = slot_of((uint32_t)syscall(SYS_gettid), false);
	if (blocks && s != NULL && s->id >= 0) {
		/* before the mask changes: from then on no signal of ours can be pending */
		syscall(SYS_timer_delete, s->id);
		mark_blocked(s, s->tid, false);
	}
	return true; /* the lock is held until isc_sampler_mask_end */
}

void isc_sampler_mask_end(void)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	struct timer_slot *s = slot_of(tid, false);
	if (s != NULL && s->id < 0 && !blocks_signal(tid, true)) {
		ensure_timer_locked(tid, true); /* unblocked: sampled again at once */
	}
	unlock_table();
}

static void delete_all(void)
{
	lock_table();
	for (unsigned i = 0; i < n_timers; i++) {
		if (timers[i].tid && timers[i].id >= 0) {
			syscall(SYS_timer_delete, timers[i].id);
		}
	}
	memset(timers, 0, sizeof(timers));
	n_timers = 0;
	unlock_table();
}

static bool alive(uint32_t tid)
{
	return !(syscall(SYS_tgkill, getpid(), tid, 0) != 0 && errno == ESRCH);
}

/* Threads of the process that never recorded anything: from /proc/self/task. */
static void scan_tasks(uint32_t self)
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		return;
	}
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			uint32_t tid = (uint32_t)strtoul(d->d_name, NULL, 10);
			if (tid && tid != self && !isc_threads_is_own(tid)) {
				ensure_timer(tid, false);
			}
			off += d->d_reclen;
		}
	}
	close(fd);
}

static void tick(uint64_t now)
{
	if (sig == 0 || stepped_aside) {
		return;
	}
	struct sigaction cur;
	if (sigaction(sig, NULL, &cur) == 0 && cur.sa_sigaction != isc_samplers_on_signal) {
		/* the program took our signal: its handler stays, our timers go */
		stepped_aside = true;
		delete_all();
		isc_info("CPU samples: the program installed a handler for signal %d; sampling "
			 "stopped",
			 sig);
		return;
	}
	uint32_t self = isc_collector_tid();
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		if (t->tid != self &&
		    atomic_load_explicit(&t->state, memory_order_relaxed) != ISC_THREAD_GONE) {
			ensure_timer(t->tid, false);
		}
	}
	/* by ticks, and at every tick after a doze of the collector (collector.h): a thread
	 * the program started while it was idle is found within a second */
	static uint64_t last;
	if (ticks++ % SCAN_EVERY == 0 || now - last > 10 * isc_config.tick_ns) {
		last = now;
		scan_tasks(self);
		lock_table();
		for (unsigned i = 0; i < n_timers; i++) {
			if (timers[i].tid && !alive(timers[i].tid)) {
				if (timers[i].id >= 0) {
					syscall(SYS_timer_delete, timers[i].id);
				}
				timers[i].tid = 0;
				timers[i].counted = false;
			} else if (timers[i].tid) {
				recheck_locked(&timers[i]);
			}
		}
		unlock_table();
	}
	if (ticks % 100 == 1) {
		isc_py_discover(); /* an interpreter loaded with dlopen (embedding) */
	}
}

/* ---- stacks of events (isc_sampler_stack_here) ---- */

unsigned isc_sampler_stack_here(uint64_t *words, unsigned max, uint16_t *native, uint16_t *python)
{
	struct isc_thread *t = isc_tls_self;
	*native = *python = 0;
	if (sig == 0 || t == NULL || max < 8) {
		return 0;
	}
	t->in_unwind++;
	isc_tls_guard++; /* libunwind's mutex is not the application's */
	unsigned n = isc_unwind_here(words, max / 2);
	uint16_t status;
	unsigned py = isc_py_walk(t, words + n, (max - n) / 2, &status);
	isc_tls_guard--;
	t->in_unwind--;
	*native = (uint16_t)n;
	*python = (uint16_t)py;
	return n + 2 * py;
}

bool isc_sampler_stack_budget(struct isc_thread *t, unsigned cls)
{
	static const uint32_t limit[2] = { 20, 20 };
	uint64_t now = isc_now();
	if (now - t->stack_window >= 1000000000u) {
		t->stack_window = now;
		t->stack_budget[0] = t->stack_budget[1] = 0;
	}
	if (t->stack_budget[cls] >= limit[cls]) {
		return false;
	}
	t->stack_budget[cls]++;
	return true;
}

unsigned isc_cuda_stack(uint64_t *w, unsigned max, bool launch)
{
	struct isc_thread *t = isc_tls_self;
	if (sig == 0 || t == NULL || max < 2 || !isc_sampler_stack_budget(t, launch ? 0 : 1)) {
		return 0;
	}
	uint16_t native, python;
	unsigned n = isc_sampler_stack_here(w + 1, max - 1, &native, &python);
	if (n == 0) {
		return 0;
	}
	w[0] = isc_stack_block_header(native, python);
	return n + 1;
}

void isc_cuda_stack_fill(struct isc_event *recs, uint32_t tid, const uint64_t *w, unsigned n)
{
	isc_stacks_fill(recs, tid, w, n);
}

/* ---- fork, metadata, init ---- */

void isc_samplers_fork_child(void)
{
	/* timers are not inherited: the child samples its (only) thread anew */
	isc_unwind_fork_child();
	atomic_store(&table_lock, 0); /* another thread may have held it at the fork */
	memset(timers, 0, sizeof(timers));
	n_timers = 0;
	ticks = 0;
	if (sig && !stepped_aside) {
		struct isc_thread *t = isc_tls_self;
		if (t) {
			t->sample_cpu_ns = 0;
			t->sample_owed_ns = 0;
			t->sample_timer = 0;
		}
		ensure_timer((uint32_t)syscall(SYS_gettid), true);
	}
}

/* The median of a histogram of ns (isc_hist_bucket's layout): the middle of the bucket that
 * holds it, within an eighth of its value; 0 when empty. */
static uint64_t median_ns(const uint64_t *h)
{
	uint64_t total = 0, seen = 0;
	for (unsigned b = 0; b < ISC_SAMPLE_HIST; b++) {
		total += h[b];
	}
	for (unsigned b = 0; total > 0 && b < ISC_SAMPLE_HIST; b++) {
		seen += h[b];
		if (2 * seen >= total) {
			return (isc_sys_bucket_low(b) + isc_sys_bucket_low(b + 1)) / 2;
		}
	}
	return 0;
}

bool isc_sampling_report(struct isc_sampling_report *r)
{
	memset(r, 0, sizeof(*r));
	uint64_t h[2][ISC_SAMPLE_HIST] = { { 0 } };
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		r->samples += t->samples;
		r->lost += t->samples_lost;
		r->handler_ns += t->sample_ns;
		r->python_ns += t->sample_py_ns;
		for (unsigned k = 0; k < 2; k++) {
			for (unsigned b = 0; b < ISC_SAMPLE_HIST; b++) {
				h[k][b] += t->sample_hist[k][b];
			}
		}
	}
	r->handler_median_ns = median_ns(h[0]);
	r->python_median_ns = median_ns(h[1]);
	r->clock_reads = atomic_load(&clock_reads);
	r->python_reads = isc_py_walk_reads();
	r->cpu_hz = sig ? isc_config.cpu_sample_hz : 0;
	r->signal = sig;
	r->python = isc_py_status();
	r->unwinder = isc_unwind_have_libunwind() ? "unwind-tables+libunwind"
						  : "unwind-tables+frame-pointers";
	r->unwind_fallbacks = isc_unwind_fallbacks();
	r->stepped_aside = stepped_aside;
	r->timer_failures = timer_failures;
	r->unsampled_threads = blocked_threads;
	return true;
}

/* The loaded segment that holds addr[0]: stored in addr[0] (start) and addr[1] (end). */
static int find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t *range = data;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && range[0] >= lo && range[0] < lo + ph->p_memsz) {
			range[0] = lo;
			range[1] = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void isc_self_code(uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t range[2] = { (uintptr_t)isc_self_code, 0 };
	*lo = *hi = 0;
	if (dl_iterate_phdr(find_segment, range) == 1) {
		*lo = range[0];
		*hi = range[1];
	}
}

void isc_samplers_init(void)
{
	if (isc_config.cpu_sample_hz == 0) {
		return;
	}
	period_ns = 1000000000ull / isc_config.cpu_sample_hz;
	isc_unwind_init();
	isc_py_discover();
	isc_spill_prepare = isc_py_resolve_records;
	wanted = true;
}

bool isc_samplers_wanted(void)
{
	return wanted;
}

void isc_samplers_start(int s)
{
	if (!wanted || sig != 0) {
		return;
	}
	sig = s;
	isc_collector_add_tick(tick);
	ensure_timer((uint32_t)syscall(SYS_gettid), true);
}
