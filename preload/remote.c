/* SPDX-License-Identifier: MIT */
#include "preload/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "preload/core/collector.h"
#include "preload/core/threads.h"
#include "preload/core/guard.h"
#include "preload/session.h"
#include "preload/window.h"

#define FD_FLOOR 32	     /* fallback mode: above the numbers programs use by number */
#define LINE_MAX_ 512	     /* one request line */
#define POLL_MS 200	     /* how often a visible socket is checked */
#define READ_TIMEOUT_MS 2000 /* a requester must send its line within this */
/* The longest a fork waits for an idle listener to end: it ends as soon as it runs,
 * which on a loaded machine may take a while. */
#define PAUSE_WAIT_NS (2000 * 1000000ull)

static struct {
	_Atomic int started_pid;
	pthread_t thread;
	char dir[108], path[108];
	char xdg[108]; /* $XDG_RUNTIME_DIR, read in the constructor */
	int fd;
	bool hidden; /* the thread has a descriptor table of its own */
	dev_t dev;
	ino_t ino;
	_Atomic bool stop;    /* asked to end (a fork's pause); taken by whoever ends it */
	_Atomic bool alive;   /* the thread runs (it may end on its own: no socket) */
	_Atomic bool counted; /* it has counted itself as the library's */
	_Atomic bool busy;    /* serving a requester (a capture window may be open) */
} rm = { .fd = -1 };

void isc_remote_dir(char *out, size_t cap, const char *xdg, unsigned uid)
{
	if (xdg && xdg[0] == '/') {
		isc_fmt(out, cap, "%s/inferscope", xdg);
	} else {
		isc_fmt(out, cap, "/tmp/inferscope-%u", uid);
	}
}

/* The directory: ours, a directory, not a link, and nobody else's to read. */
static int make_dir(void)
{
	struct stat st;
	if (mkdir(rm.dir, 0700) != 0 && errno != EEXIST) {
		return -errno;
	}
	if (lstat(rm.dir, &st) != 0) {
		return -errno;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		return -EPERM;
	}
	return 0;
}

/* The socket's address: rm.path. */
static void socket_address(struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	isc_fmt(a->sun_path, sizeof(a->sun_path), "%s", rm.path);
}

static int make_socket(void)
{
	struct sockaddr_un a;
	struct stat st;
	int r = make_dir();
	if (r < 0) {
		return r;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	if (!rm.hidden) {
		int h = fcntl(fd, F_DUPFD_CLOEXEC, FD_FLOOR);
		if (h >= 0) {
			close(fd);
			fd = h;
		}
	}
	socket_address(&a);
	unlink(rm.path); /* a socket left by a killed process that had our pid */
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || chmod(rm.path, 0600) != 0 ||
	    listen(fd, 16) != 0 || fstat(fd, &st) != 0) {
		r = -errno;
		close(fd);
		return r;
	}
	rm.dev = st.st_dev;
	rm.ino = st.st_ino;
	rm.fd = fd;
	return 0;
}

/* Fallback mode: the program may have closed our descriptor or put another there. */
static bool still_ours(void)
{
	struct stat st;
	return rm.hidden || (fstat(rm.fd, &st) == 0 && st.st_dev == rm.dev && st.st_ino == rm.ino);
}

static void say(int c, const char *line)
{
	size_t n = strlen(line);
	while (n > 0) {
		ssize_t w = send(c, line, n, MSG_NOSIGNAL);
		if (w <= 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return;
		}
		line += w;
		n -= (size_t)w;
	}
}

static bool allowed(int c)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);
	return getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 &&
	       (cr.uid == geteuid() || cr.uid == 0);
}

static bool read_line(int c, char *buf, size_t cap)
{
	size_t n = 0;
	struct pollfd p = { c, POLLIN, 0 };
	while (n + 1 < cap && poll(&p, 1, READ_TIMEOUT_MS) == 1) {
		ssize_t r = recv(c, buf + n, cap - 1 - n, 0);
		if (r <= 0) {
			return false;
		}
		n += (size_t)r;
		buf[n] = '\0';
		char *nl = memchr(buf, '\n', n);
		if (nl) {
			*nl = '\0';
			return true;
		}
	}
	return false;
}

static const char *arg(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	return p ? p + strlen(key) : NULL;
}

static void pong(int c)
{
	char out[160];
	isc_fmt(out, sizeof(out), "INFERSCOPE pid=%d pgid=%d sid=%d mode=%s\n", isc_session.pid,
		(int)getpgid(0), (int)getsid(0), isc_config.continuous ? "continuous" : "default");
	say(c, out);
}

static bool parse_capture(const char *line, struct isc_window_req *q)
{
	memset(q, 0, sizeof(*q));
	const char *v;
	if ((v = arg(line, "steps=")) != NULL) {
		q->steps = (unsigned)strtoul(v, NULL, 10);
	}
	if ((v = arg(line, "duration_ns=")) != NULL) {
		q->duration_ns = strtoull(v, NULL, 10);
	}
	if ((v = arg(line, "step=")) != NULL) {
		size_t n = strcspn(v, " ");
		if (n >= sizeof(q->step)) {
			return false;
		}
		memcpy(q->step, v, n);
		q->step[n] = '\0';
	}
	return (q->steps > 0) != (q->duration_ns > 0);
}

/* Another requester while a window runs: a PING is answered, a CAPTURE refused. */
static void answer_busy(int lfd)
{
	char line[LINE_MAX_];
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0) {
		return;
	}
	if (!allowed(c)) {
		say(c, "ERR permission: not the process's user or root\n");
	} else if (read_line(c, line, sizeof(line))) {
		if (strncmp(line, "PING", 4) == 0) {
			pong(c);
		} else {
			say(c, "ERR busy: a capture window of this process is already open\n");
		}
	}
	close(c);
}

/* Waits for the window to be written while watching the requester and new ones. */
static void run_window(int c)
{
	char path[4096], out[4200];
	unsigned steps = 0;
	unsigned long long events = 0;
	for (;;) {
		struct pollfd p[2] = { { c, POLLIN, 0 }, { rm.fd, POLLIN, 0 } };
		int n = poll(p, 2, 20);
		enum isc_window_state s = isc_window_poll(path, sizeof(path), &steps, &events);
		if (s == ISC_WIN_WRITTEN) {
			isc_fmt(out, sizeof(out), "OK path=%s steps=%u events=%llu\n", path, steps,
				events);
			say(c, out);
			break;
		}
		if (s == ISC_WIN_FAILED) {
			say(c, "ERR failed: the window's trace could not be written (see the "
			       "process's stderr with INFERSCOPE_DEBUG=1)\n");
			break;
		}
		if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			char b;
			if (recv(c, &b, 1, MSG_DONTWAIT) <= 0) {
				isc_window_cancel(); /* the requester gave up */
			}
		}
		if (n > 0 && (p[1].revents & POLLIN)) {
			answer_busy(rm.fd);
		}
	}
	isc_window_reset();
}

static void serve(int c)
{
	char line[LINE_MAX_];
	struct isc_window_req q;
	if (!allowed(c)) {
		say(c, "ERR permission: not the process's user or root\n");
		return;
	}
	if (!read_line(c, line, sizeof(line))) {
		return;
	}
	if (strncmp(line, "PING", 4) == 0) {
		pong(c);
	} else if (strncmp(line, "CAPTURE", 7) != 0 || !parse_capture(line, &q)) {
		say(c, "ERR usage: CAPTURE steps=N [step=NAME] | CAPTURE duration_ns=D\n");
	} else if (isc_window_open(&q) < 0) {
		say(c, "ERR busy: a capture window of this process is already open\n");
	} else {
		say(c, "STARTED\n");
		run_window(c);
	}
}

/* The thread's own descriptor table, emptied: 0-2 on /dev/null so that nothing of
 * ours lands where stdio is expected. */
static bool hide(void)
{
	if (unshare(CLONE_FILES) != 0) {
		return false;
	}
	syscall(SYS_close_range, 0u, ~0u, 0u);
	for (int i = 0; i < 3; i++) {
		if (open("/dev/null", O_RDWR) != i) {
			break;
		}
	}
	return true;
}

static void *listener_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	isc_tls_guard = 1; /* nothing this thread does is the application's */
	prctl(PR_SET_NAME, "inferscope-ctl", 0, 0, 0);
	isc_threads_own(1); /* never keeps alive a program that has ended */
	atomic_store(&rm.counted, true);
	rm.hidden = hide();
	if (make_socket() < 0) {
		goto out;
	}
	for (;;) {
		struct pollfd p = { rm.fd, POLLIN, 0 };
		int n = poll(&p, 1, POLL_MS);
		if (atomic_exchange(&rm.stop, false)) {
			break; /* paused for a fork (the descriptor table goes with the thread) */
		}
		if (n == 0 && !isc_collector_running() && isc_threads_orphaned()) {
			/* the program's last thread ended while nothing recorded (paused): glibc
			 * would have ended the process with exit(0); the collector, which does
			 * that otherwise, is not running */
			exit(0);
		}
		if (!still_ours()) {
			rm.fd = -1; /* not ours to close any more */
			if (make_socket() < 0) {
				goto out;
			}
			continue;
		}
		if (n <= 0 || !(p.revents & POLLIN)) {
			continue;
		}
		int c = accept4(rm.fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0) {
			atomic_store(&rm.busy, true);
			serve(c);
			atomic_store(&rm.busy, false);
			close(c);
		}
	}
	if (!rm.hidden) {
		close(rm.fd);
	}
	rm.fd = -1;
out:
	isc_threads_own(-1);
	atomic_store(&rm.alive, false);
	return NULL;
}

/*
 * Where the socket goes is read once, from the constructor: getenv may be the
 * program's (bash has its own, over hash tables it changes unlocked) and is never
 * called from a hook or from a thread of ours (the collector's tick crashed bash's
 * lookup while bash's main thread changed its variables).
 */
void isc_remote_init(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	isc_fmt(rm.xdg, sizeof(rm.xdg), "%s", xdg ? xdg : "");
}

void isc_remote_start(void)
{
	int pid = (int)syscall(SYS_getpid);
	if (!isc_config.listen || atomic_load(&rm.started_pid) == pid) {
		return;
	}
	atomic_store(&rm.started_pid, pid);
	isc_remote_dir(rm.dir, sizeof(rm.dir), rm.xdg, (unsigned)geteuid());
	isc_fmt(rm.path, sizeof(rm.path), "%s/%d.sock", rm.dir, pid);
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024); /* joinable: a fork's pause joins it */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	isc_tls_guard++;
	atomic_store(&rm.alive, true);
	atomic_store(&rm.counted, false);
	int r = pthread_create(&rm.thread, &attr, listener_main, NULL);
	isc_tls_guard--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		atomic_store(&rm.alive, false);
		isc_error("cannot start the control-socket thread (%s): `inferscope capture` "
			  "cannot reach this process",
			  strerror(r));
		return;
	}
	isc_threads_await_start(&rm.counted);
}

/* The listener starts from the collector's first tick: a clean thread, where the hook
 * that took the first chunk may hold a lock of the program's allocator (a thread
 * created there hung with jemalloc preloaded behind us). */
void isc_remote_tick(uint64_t now)
{
	(void)now;
	if (isc_config.listen &&
	    atomic_load_explicit(&rm.started_pid, memory_order_relaxed) != isc_session.pid) {
		isc_remote_start();
	}
}

bool isc_remote_running(void)
{
	return atomic_load(&rm.started_pid) == (int)syscall(SYS_getpid);
}

/* Wakes the listener out of its poll: a connection it will not accept. */
static void knock(void)
{
	struct sockaddr_un a;
	socket_address(&a);
	int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		syscall(SYS_connect, fd, (struct sockaddr *)&a, sizeof(a));
		syscall(SYS_close, fd);
	}
}

/* The listener ends when it takes `stop`; one busy with a requester (a capture window
 * open, a request line awaited) is left running: the stop is taken back. */
bool isc_remote_pause(void)
{
	if (!isc_remote_running() || !atomic_load(&rm.alive)) {
		return true; /* none, or it ended on its own: nothing to stop or restart */
	}
	if (atomic_load(&rm.busy)) {
		return false;
	}
	atomic_store(&rm.stop, true);
	knock();
	uint64_t deadline = isc_kernel_now() + PAUSE_WAIT_NS;
	bool taken = false;
	while (!(taken = !atomic_load(&rm.stop)) && isc_kernel_now() < deadline) {
		isc_kernel_sleep(100000);
	}
	bool mine = true;
	if (!taken && atomic_compare_exchange_strong(&rm.stop, &mine, false)) {
		return false;
	}
	pthread_join(rm.thread, NULL);
	unlink(rm.path); /* made again when it starts; never left behind by an exit meanwhile */
	atomic_store(&rm.started_pid, 0);
	return true;
}

void isc_remote_reset_after_fork(void)
{
	if (!rm.hidden && rm.fd >= 0) {
		close(rm.fd); /* the parent's socket, inherited: the child makes its own */
	}
	rm.fd = -1;
	rm.hidden = false;
}

void isc_remote_stop(void)
{
	if (atomic_load(&rm.started_pid) == (int)syscall(SYS_getpid) && rm.path[0]) {
		unlink(rm.path);
	}
}
