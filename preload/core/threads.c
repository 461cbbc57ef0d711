/* SPDX-License-Identifier: MIT */
/*
 * The process's threads as the library counts them (threads.h): its own, the
 * program's, whether the program has ended, and the quiet period after a fork.
 */
#include "preload/core/threads.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "preload/core/guard.h"
#include "preload/core/procfs.h"

static _Atomic int own_threads; /* the library's threads alive in this process */

#define OWN_TIDS 8
static _Atomic uint32_t own_tids[OWN_TIDS]; /* who they are (0: a free slot) */

void isc_threads_own(int delta)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	for (unsigned i = 0; i < OWN_TIDS; i++) {
		uint32_t want = delta > 0 ? 0 : tid;
		if (atomic_compare_exchange_strong(&own_tids[i], &want, delta > 0 ? tid : 0)) {
			break;
		}
	}
	atomic_fetch_add(&own_threads, delta);
}

bool isc_threads_is_own(uint32_t tid)
{
	for (unsigned i = 0; i < OWN_TIDS; i++) {
		if (atomic_load(&own_tids[i]) == tid) {
			return true;
		}
	}
	return false;
}

#define START_WAIT_NS (1000 * 1000000ull)

void isc_threads_await_start(_Atomic bool *flag)
{
	uint64_t deadline = isc_kernel_now() + START_WAIT_NS;
	while (!atomic_load(flag) && isc_kernel_now() < deadline) {
		isc_kernel_sleep(20000);
	}
}

/* A stat line past "pid (comm)": the space before the state, or NULL. The command
 * name may hold spaces and parentheses: the last ')' ends it. */
static const char *after_comm(const char *stat)
{
	const char *p = strrchr(stat, ')');
	return p != NULL && p[1] == ' ' ? p + 1 : NULL;
}

static bool ended(char state)
{
	return state == 'Z' || state == 'X';
}

/* Threads of the program still alive, read without a descriptor (a program that lists
 * its own must never see one of ours): the kernel's count (the link count of
 * /proc/self/task is 2 + threads) less the library's own, and less the main thread when
 * it has ended (a zombie, still counted until the whole process ends; its exe link is
 * gone with its memory). -1 when unreadable. */
long isc_program_threads(void)
{
	struct stat st;
	if (stat("/proc/self/task", &st) != 0 || st.st_nlink < 3) {
		return -1;
	}
	long n = (long)st.st_nlink - 2 - atomic_load(&own_threads);
	if (n == 1) {
		char path[64], target[8];
		isc_fmt(path, sizeof(path), "/proc/self/task/%d/exe", (int)syscall(SYS_getpid));
		if (readlink(path, target, sizeof(target)) < 0 && errno == ENOENT) {
			n = 0; /* the one left is the main thread's zombie */
		}
	}
	return n;
}

/* Threads of the process not ended, one by one: /proc/self/task/<tid>/stat, state
 * field neither Z nor X. Without malloc or stdio (raw getdents64). -1 when unreadable. */
static long live_tasks(void)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task",
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		return -1;
	}
	long live = 0;
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			off += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9') {
				continue;
			}
			char path[64], stat[512];
			isc_fmt(path, sizeof(path), "/proc/self/task/%s/stat", d->name);
			if (isc_slurp(path, stat, sizeof(stat)) == 0) {
				continue; /* gone meanwhile */
			}
			const char *p = after_comm(stat);
			live += p != NULL && !ended(p[1]);
		}
	}
	syscall(SYS_close, fd);
	return n < 0 ? -1 : live;
}

/* The cheap count first (one read a check); a zero is confirmed thread by thread before
 * the process is ended: the count was once seen at 0 while a program thread ran. */
bool isc_threads_orphaned(void)
{
	if (isc_program_threads() != 0) {
		return false;
	}
	long live = live_tasks();
	return live >= 0 && live <= atomic_load(&own_threads);
}

/*
 * The quiet period after a fork: 50 ms of the forking thread's own time (the kernel's
 * clock less the time it waited on a run queue, /proc/self/task/TID/schedstat), so that
 * a parent descheduled on a loaded machine is still quiet when it runs again; 2 s of
 * the kernel's clock at most.
 */
#define QUIET_NS (50 * 1000000ull)
#define QUIET_MAX_NS (2000 * 1000000ull)
static struct {
	uint32_t tid; /* 0: not quiet */
	uint64_t wall0, delay0;
} quiet;

/* Time the thread has waited on a run queue, ns (0 where schedstat is not kept). */
static uint64_t run_delay(uint32_t tid)
{
	char path[64], buf[128];
	isc_fmt(path, sizeof(path), "/proc/self/task/%u/schedstat", tid);
	if (isc_slurp(path, buf, sizeof(buf)) == 0) {
		return 0;
	}
	const char *p = strchr(buf, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

void isc_fork_quiet_begin(bool on)
{
	quiet.tid = on ? (uint32_t)syscall(SYS_gettid) : 0;
	quiet.wall0 = isc_kernel_now();
	quiet.delay0 = on ? run_delay(quiet.tid) : 0;
}

bool isc_fork_quiet(void)
{
	if (quiet.tid == 0) {
		return false;
	}
	uint64_t wall = isc_kernel_now() - quiet.wall0;
	uint64_t waited = run_delay(quiet.tid);
	waited = waited > quiet.delay0 ? waited - quiet.delay0 : 0;
	if (wall < QUIET_MAX_NS && wall < QUIET_NS + waited) {
		return true;
	}
	quiet.tid = 0;
	return false;
}

void isc_threads_reset_after_fork(void)
{
	atomic_store(&own_threads, 0);
	for (unsigned i = 0; i < OWN_TIDS; i++) {
		atomic_store(&own_tids[i], 0);
	}
	quiet.tid = 0;
}

bool isc_threads_last_of_program(void)
{
	return atomic_load(&own_threads) > 0 && isc_program_threads() == 1;
}

/* ---- descriptors of our own ---- */

bool isc_threads_hide_fds(void)
{
	if (unshare(CLONE_FILES) != 0) {
		return false;
	}
	/* what the copy inherited would keep the program's files open (a pipe's write end
	 * the program closes to say EOF): none of it is ours. Every number is then free for
	 * our files, 0-2 included (messages borrow the program's stderr line by line): a
	 * program that lowers RLIMIT_NOFILE to 3 still leaves room for the spill and the
	 * trace. */
	syscall(SYS_close_range, 0u, ~0u, 0u);
	isc_log_private_table();
	return true;
}

struct private_run {
	void (*fn)(void *);
	void *arg;
	_Atomic bool hidden;
};

static void *private_main(void *p)
{
	struct private_run *run = p;
	sigset_t all;
	sigfillset(&all);
	isc_tls_guard = 1; /* nothing this thread does is the application's */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	isc_threads_own(1);
	if (isc_threads_hide_fds()) {
		atomic_store(&run->hidden, true);
		run->fn(run->arg);
	}
	isc_threads_own(-1);
	return NULL;
}

/* Adds one module's TLS block, at its alignment, to *arg. */
static int add_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_TLS) {
			*(size_t *)arg += ph->p_memsz + (ph->p_align > 1 ? ph->p_align : 0);
		}
	}
	return 0;
}

int isc_threads_start(pthread_t *th, size_t stack, void *(*fn)(void *), void *arg)
{
	/*
	 * Every module's TLS counted, the dlopen'ed ones too (theirs is allocated apart,
	 * so this over-counts, in address space the thread never touches), plus room for
	 * the descriptor and glibc's static TLS surplus.
	 */
	size_t tls = 0;
	dl_iterate_phdr(add_tls, &tls);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (stack + tls + 64 * 1024 + page - 1) & ~(page - 1);
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, size);
	sigfillset(&all);
	isc_tls_guard++; /* the library's own mask change and allocations: no hook counts them */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(th, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	isc_tls_guard--;
	pthread_attr_destroy(&attr);
	return r;
}

bool isc_threads_run_private(void (*fn)(void *), void *arg)
{
	struct private_run run = { fn, arg, false };
	pthread_t th;
	int r = isc_threads_start(&th, 256 * 1024, private_main, &run);
	if (r == 0) {
		pthread_join(th, NULL);
	}
	if (r != 0 || !atomic_load(&run.hidden)) {
		fn(arg); /* no thread or no unshare (a seccomp policy): here, as before */
	}
	return r == 0 && atomic_load(&run.hidden);
}
