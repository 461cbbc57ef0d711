/* SPDX-License-Identifier: MIT */
/*
 * The process's threads as the library counts them: its own (the collector, the
 * control socket's listener), the program's, whether the program has ended, and the
 * quiet period after a fork.
 */
#ifndef ISC_THREADS_H
#define ISC_THREADS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Counts a thread of the library's own (+1 when it starts, -1 when it ends). The
 * collector ends the process with exit(0), as glibc would have, once only such threads
 * are left: they must never keep alive a program whose last thread has ended.
 */
void isc_threads_own(int delta);
/* Whether tid is one of them (the sampler never arms a timer for ours). */
bool isc_threads_is_own(uint32_t tid);
/* The thread that starts one of them waits (at most 1 s) for it to have counted itself
 * and set *flag: a count read after a start has returned is exact. */
void isc_threads_await_start(_Atomic bool *flag);
/* The program's live threads (the kernel's count less ours and less an ended main
 * thread), read without a descriptor; -1 when unreadable. */
long isc_program_threads(void);
/* True when only the library's own threads are left (the check the collector makes;
 * the listener makes it while the collector does not run). */
bool isc_threads_orphaned(void);
/* True when the calling thread, ending, is the program's last and a thread of ours
 * would keep the process alive: glibc would now end it with exit(0) (the caller does,
 * in the program's descriptor table, which goes when its last thread has gone). */
bool isc_threads_last_of_program(void);

/*
 * The quiet period after a fork. A single-threaded program that forks must stay
 * single-threaded as far as it can see: CPython >= 3.12 reads the thread count of
 * /proc/self/stat right after fork() returns in the parent and warns ("multi-threaded,
 * use of fork() may lead to deadlocks") when it is above 1. The fork's prepare handler
 * stops the library's threads; the parent handler starts a quiet period
 * (isc_fork_quiet_begin): 50 ms of the forking thread's own time, not counting time it
 * waited on a run queue (a parent descheduled on a loaded machine is still quiet when
 * it runs), 2 s at most. No thread of ours starts while isc_fork_quiet(): a program
 * that reads its thread count right after fork() never sees one. A parent that blocks
 * (waitpid) right after the fork gets them back when it runs again.
 */
void isc_fork_quiet_begin(bool quiet);
bool isc_fork_quiet(void);

/*
 * Descriptors of the library's own. The calling thread unshares its descriptor table
 * (unshare(CLONE_FILES)) and empties it (messages go to the program's stderr, borrowed
 * line by line): what it opens afterwards is in no table the program
 * can see, close, reuse or hand to a child. False where unshare is refused.
 */
bool isc_threads_hide_fds(void);
/*
 * Runs fn(arg) where its descriptors are invisible to the program, and where the
 * program's RLIMIT_NOFILE or its use of every low number leaves room for ours: on a
 * short-lived thread that hid its table, joined before returning; on the caller only
 * when no such thread can be had. True when it ran hidden.
 */
bool isc_threads_run_private(void (*fn)(void *), void *arg);

/*
 * Starts a thread of the library's own: every signal blocked in it from its first
 * instruction, a stack of `stack` bytes of its own beyond the program's static TLS.
 * glibc carves the static TLS of every module loaded at start (and the thread's
 * descriptor) out of the stack size asked for: a program linked with cuBLAS brings
 * ~106 KiB of it, enough to overflow a 128 KiB stack at its first call. Returns
 * pthread_create's result.
 */
int isc_threads_start(pthread_t *th, size_t stack, void *(*fn)(void *), void *arg);

/* After fork() in the child: none of ours exists there. */
void isc_threads_reset_after_fork(void);

#endif /* ISC_THREADS_H */
