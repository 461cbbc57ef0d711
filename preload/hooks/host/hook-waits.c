/* SPDX-License-Identifier: MIT */
/* The hooks define the libc names themselves: no header renaming open to open64
 * (meson builds with _FILE_OFFSET_BITS=64) and no fortified inline wrappers. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
/*
 * Waits: poll/ppoll/select/pselect/epoll_wait/epoll_pwait (with __poll_chk and
 * __ppoll_chk), sleeps (nanosleep, clock_nanosleep, usleep, sleep), the
 * futex-based waits of pthreads: pthread_mutex_lock, pthread_cond_*wait, sem_*wait, and
 * the waits for a child's end (wait, wait3, wait4, waitpid, waitid: a wrapper shell or
 * a launcher that waits for the program it started is child_bound, docs/rules.md).
 *
 * An uncontended lock is the common case and must stay as cheap as it is: the
 * mutex hook looks at the lock word first and goes straight to the real lock,
 * without reading the clock, when the mutex is free (see uncontended()); only a
 * lock another thread holds is timed. Semaphores get the same treatment with
 * sem_trywait, where glibc's own wait would not first reject its arguments, and
 * with errno kept.
 *
 * pthread_cond_wait and pthread_cond_timedwait have two symbol versions in glibc;
 * the hooks forward to the current one (GLIBC_2.3.2), which is what every program
 * built since 2003 references. A binary still bound to the 2.2.5 condvar ABI is not
 * supported under the preload.
 */
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload/hooks/host/host.h"
#include "preload/core/export.h"

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *ss,
		size_t fdslen);

static struct {
	__typeof(poll) *poll;
	__typeof(__poll_chk) *poll_chk;
	__typeof(ppoll) *ppoll;
	__typeof(__ppoll_chk) *ppoll_chk;
	__typeof(select) *select;
	__typeof(pselect) *pselect;
	__typeof(epoll_wait) *epoll_wait;
	__typeof(epoll_pwait) *epoll_pwait;
	__typeof(nanosleep) *nanosleep;
	__typeof(clock_nanosleep) *clock_nanosleep;
	__typeof(usleep) *usleep;
	__typeof(sleep) *sleep;
	__typeof(pthread_mutex_lock) *mutex_lock;
	__typeof(pthread_cond_wait) *cond_wait;
	__typeof(pthread_cond_timedwait) *cond_timedwait;
	__typeof(pthread_cond_clockwait) *cond_clockwait;
	__typeof(sem_wait) *sem_wait;
	__typeof(sem_timedwait) *sem_timedwait;
	__typeof(sem_clockwait) *sem_clockwait;
	__typeof(sem_trywait) *sem_trywait;
	__typeof(wait) *wait;
	__typeof(wait3) *wait3;
	__typeof(wait4) *wait4;
	__typeof(waitpid) *waitpid;
	__typeof(waitid) *waitid;
} real;

void isc_hooks_waits_resolve(void)
{
	real.poll_chk = isc_host_next("__poll_chk");
	real.ppoll = isc_host_next("ppoll");
	real.ppoll_chk = isc_host_next("__ppoll_chk");
	real.select = isc_host_next("select");
	real.pselect = isc_host_next("pselect");
	real.epoll_wait = isc_host_next("epoll_wait");
	real.epoll_pwait = isc_host_next("epoll_pwait");
	real.nanosleep = isc_host_next("nanosleep");
	real.clock_nanosleep = isc_host_next("clock_nanosleep");
	real.usleep = isc_host_next("usleep");
	real.sleep = isc_host_next("sleep");
	real.mutex_lock = isc_host_next("pthread_mutex_lock");
	real.cond_wait = isc_host_next_v("pthread_cond_wait", "GLIBC_2.3.2");
	real.cond_timedwait = isc_host_next_v("pthread_cond_timedwait", "GLIBC_2.3.2");
	real.cond_clockwait = isc_host_next("pthread_cond_clockwait");
	real.sem_wait = isc_host_next("sem_wait");
	real.sem_timedwait = isc_host_next("sem_timedwait");
	real.sem_clockwait = isc_host_next("sem_clockwait");
	real.sem_trywait = isc_host_next("sem_trywait");
	real.poll = isc_host_next("poll");
	real.wait = isc_host_next("wait");
	real.wait3 = isc_host_next("wait3");
	real.wait4 = isc_host_next("wait4");
	real.waitpid = isc_host_next("waitpid");
	real.waitid = isc_host_next("waitid");
}

#define REAL(f) (__builtin_expect(real.f != NULL, 1) ? real.f : (isc_hooks_waits_resolve(), real.f))

/* Ends a call that returns -1 and sets errno on failure. */
static inline int done(const struct isc_sys_call *c, int fd, int r)
{
	isc_sys_end(c, fd, 0, 0, r, isc_sys_err(r));
	return r;
}

/* Ends a pthread call, which returns its error code. */
static inline int done_code(const struct isc_sys_call *c, int r)
{
	isc_sys_end(c, -1, 0, 0, r, r);
	return r;
}

/* ---- poll, select, epoll ---- */

ISC_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_POLL)) {
		return REAL(poll)(fds, n, timeout);
	}
	return done(&c, -1, REAL(poll)(fds, n, timeout));
}

ISC_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_POLL)) {
		return REAL(poll_chk)(fds, n, timeout, fdslen);
	}
	return done(&c, -1, REAL(poll_chk)(fds, n, timeout, fdslen));
}

ISC_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		     const sigset_t *ss)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PPOLL)) {
		return REAL(ppoll)(fds, n, timeout, ss);
	}
	return done(&c, -1, REAL(ppoll)(fds, n, timeout, ss));
}

ISC_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
			   const sigset_t *ss, size_t fdslen)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PPOLL)) {
		return REAL(ppoll_chk)(fds, n, timeout, ss, fdslen);
	}
	return done(&c, -1, REAL(ppoll_chk)(fds, n, timeout, ss, fdslen));
}

ISC_EXPORT int select(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e,
		      struct timeval *restrict tv)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_SELECT)) {
		return REAL(select)(n, r, w, e, tv);
	}
	return done(&c, -1, REAL(select)(n, r, w, e, tv));
}

ISC_EXPORT int pselect(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e,
		       const struct timespec *restrict ts, const sigset_t *restrict ss)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PSELECT)) {
		return REAL(pselect)(n, r, w, e, ts, ss);
	}
	return done(&c, -1, REAL(pselect)(n, r, w, e, ts, ss));
}

ISC_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_EPOLL_WAIT)) {
		return REAL(epoll_wait)(epfd, ev, max, timeout);
	}
	return done(&c, epfd, REAL(epoll_wait)(epfd, ev, max, timeout));
}

ISC_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			   const sigset_t *ss)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_EPOLL_PWAIT)) {
		return REAL(epoll_pwait)(epfd, ev, max, timeout, ss);
	}
	return done(&c, epfd, REAL(epoll_pwait)(epfd, ev, max, timeout, ss));
}

/* ---- a child's end ---- */

ISC_EXPORT pid_t wait(int *status)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_WAIT)) {
		return REAL(wait)(status);
	}
	return done(&c, -1, REAL(wait)(status));
}

ISC_EXPORT pid_t wait3(int *status, int options, struct rusage *usage)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_WAIT3)) {
		return REAL(wait3)(status, options, usage);
	}
	return done(&c, -1, REAL(wait3)(status, options, usage));
}

ISC_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_WAIT4)) {
		return REAL(wait4)(pid, status, options, usage);
	}
	return done(&c, -1, REAL(wait4)(pid, status, options, usage));
}

ISC_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_WAITPID)) {
		return REAL(waitpid)(pid, status, options);
	}
	return done(&c, -1, REAL(waitpid)(pid, status, options));
}

ISC_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_WAITID)) {
		return REAL(waitid)(type, id, info, options);
	}
	return done(&c, -1, REAL(waitid)(type, id, info, options));
}

/* ---- sleeps ---- */

ISC_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_NANOSLEEP)) {
		return REAL(nanosleep)(req, rem);
	}
	return done(&c, -1, REAL(nanosleep)(req, rem));
}

ISC_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
			       struct timespec *rem)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_CLOCK_NANOSLEEP)) {
		return REAL(clock_nanosleep)(clk, flags, req, rem);
	}
	return done_code(&c, REAL(clock_nanosleep)(clk, flags, req, rem));
}

ISC_EXPORT int usleep(useconds_t us)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_USLEEP)) {
		return REAL(usleep)(us);
	}
	return done(&c, -1, REAL(usleep)(us));
}

ISC_EXPORT unsigned int sleep(unsigned int s)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_SLEEP)) {
		return REAL(sleep)(s);
	}
	unsigned int left = REAL(sleep)(s);
	isc_sys_end(&c, -1, 0, 0, left, 0);
	return left;
}

/* ---- futex-based waits ---- */

/*
 * Is the mutex free, or held by the caller (a recursive re-lock, or the deadlock an
 * error-checking mutex reports)? Then locking it is no wait. The lock word and the
 * owner are the public members of glibc's pthread_mutex_t; 0 means unlocked for
 * every mutex kind. A lock taken by another thread between this look and the real
 * lock is not timed: a race window of nanoseconds, against pthread_mutex_trylock,
 * which costs 7 ns more than an uncontended lock here on every call.
 */
static inline bool uncontended(pthread_mutex_t *m, const struct isc_thread *t)
{
	int word = __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED);
	return word == 0 ||
	       (t && __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED) == (int)t->tid);
}

ISC_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	struct isc_sys_call c;
	if (!isc_sys.on || isc_tls_guard != 0 || uncontended(m, isc_tls_self) ||
	    !isc_sys_begin(&c, ISC_SC_MUTEX_LOCK)) {
		return REAL(mutex_lock)(m);
	}
	return done_code(&c, REAL(mutex_lock)(m));
}

ISC_EXPORT int pthread_cond_wait(pthread_cond_t *restrict cv, pthread_mutex_t *restrict m)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_COND_WAIT)) {
		return REAL(cond_wait)(cv, m);
	}
	return done_code(&c, REAL(cond_wait)(cv, m));
}

ISC_EXPORT int pthread_cond_timedwait(pthread_cond_t *restrict cv, pthread_mutex_t *restrict m,
				      const struct timespec *restrict abstime)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_COND_TIMEDWAIT)) {
		return REAL(cond_timedwait)(cv, m, abstime);
	}
	return done_code(&c, REAL(cond_timedwait)(cv, m, abstime));
}

ISC_EXPORT int pthread_cond_clockwait(pthread_cond_t *restrict cv, pthread_mutex_t *restrict m,
				      clockid_t clk, const struct timespec *restrict abstime)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_COND_CLOCKWAIT)) {
		return REAL(cond_clockwait)(cv, m, clk, abstime);
	}
	return done_code(&c, REAL(cond_clockwait)(cv, m, clk, abstime));
}

/* Takes the semaphore when that needs no wait; errno stays as it was. */
static bool sem_taken(sem_t *s)
{
	int saved = errno;
	bool ok = REAL(sem_trywait)(s) == 0;
	errno = saved;
	return ok;
}

static bool valid_abstime(const struct timespec *t)
{
	return t != NULL && t->tv_nsec >= 0 && t->tv_nsec < 1000000000;
}

ISC_EXPORT int sem_wait(sem_t *s)
{
	struct isc_sys_call c;
	if (!isc_sys.on || isc_tls_guard != 0) {
		return REAL(sem_wait)(s);
	}
	if (sem_taken(s)) {
		return 0;
	}
	if (!isc_sys_begin(&c, ISC_SC_SEM_WAIT)) {
		return REAL(sem_wait)(s);
	}
	return done(&c, -1, REAL(sem_wait)(s));
}

ISC_EXPORT int sem_timedwait(sem_t *restrict s, const struct timespec *restrict abstime)
{
	struct isc_sys_call c;
	if (!isc_sys.on || isc_tls_guard != 0) {
		return REAL(sem_timedwait)(s, abstime);
	}
	if (valid_abstime(abstime) && sem_taken(s)) {
		return 0;
	}
	if (!isc_sys_begin(&c, ISC_SC_SEM_TIMEDWAIT)) {
		return REAL(sem_timedwait)(s, abstime);
	}
	return done(&c, -1, REAL(sem_timedwait)(s, abstime));
}

ISC_EXPORT int sem_clockwait(sem_t *restrict s, clockid_t clk,
			     const struct timespec *restrict abstime)
{
	struct isc_sys_call c;
	if (!isc_sys.on || isc_tls_guard != 0) {
		return REAL(sem_clockwait)(s, clk, abstime);
	}
	bool clock_ok = clk == CLOCK_MONOTONIC || clk == CLOCK_REALTIME;
	if (clock_ok && valid_abstime(abstime) && sem_taken(s)) {
		return 0;
	}
	if (!isc_sys_begin(&c, ISC_SC_SEM_CLOCKWAIT)) {
		return REAL(sem_clockwait)(s, clk, abstime);
	}
	return done(&c, -1, REAL(sem_clockwait)(s, clk, abstime));
}
