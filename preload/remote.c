/* SPDX-License-Identifier: MIT */
#include "preload/remote.h"

#include <dirent.h>
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
#include "common/sockdir.h"
#include "preload/core/collector.h"
#include "preload/core/threads.h"
#include "preload/core/guard.h"
#include "preload/session.h"
#include "preload/window.h"

#define FD_FLOOR 32		       /* fallback mode: above the numbers programs use by number */
#define LINE_MAX_ 512		       /* one request line */
#define POLL_MS 200		       /* how often a visible socket is checked */
#define WINDOW_POLL_MS 20	       /* how often an open window's state is read */
#define REQUEST_NS (2000 * 1000000ull) /* a requester's whole line, from its connection */
#define CLIENTS 8 /* requesters served at once; a new one evicts the oldest reader */
/* The longest a fork waits for an idle listener to end: it ends as soon as it runs,
 * which on a loaded machine may take a while. */
#define PAUSE_WAIT_NS (2000 * 1000000ull)

/* A connected requester: reading its line until its deadline, or waiting for its window. */
struct client {
	int fd;
	bool window;	   /* its CAPTURE started the window: no deadline, no eviction */
	uint64_t deadline; /* absolute: bytes that trickle in do not move it */
	size_t n;
	char line[LINE_MAX_];
};

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
	struct client cl[CLIENTS];
	int ncl;
} rm = { .fd = -1 };

/* The socket directory for uid: the first candidate of common/sockdir.h. */
static void socket_dir(char *out, size_t cap, const char *xdg, unsigned uid)
{
	out[0] = '\0';
	for (int i = 0; i < 3 && !isc_sockdir_candidate(i, xdg, uid, out, cap); i++) {
	}
}

/* The directory: ours, a directory, not a link, and nobody else's to read. One that
 * another user made first (/tmp/inferscope-UID is a name anyone can take) is refused
 * aloud: `inferscope capture` refuses it too, with the same words. Said from
 * isc_remote_start, where stderr is the program's (the listener's 2 is /dev/null). */
static int make_dir(void)
{
	unsigned owner = 0;
	const char *why = "";
	if (mkdir(rm.dir, 0700) != 0 && errno != EEXIST) {
		return -errno;
	}
	int r = isc_sockdir_check(rm.dir, (unsigned)geteuid(), &owner, &why);
	if (r == -EPERM) {
		isc_error("control socket: %s is %s (uid %u), not this process's (uid %u): not "
			  "listening, `inferscope capture` cannot reach process %d (remove it, or "
			  "set XDG_RUNTIME_DIR)",
			  rm.dir, why, owner, (unsigned)geteuid(), isc_session.pid);
	}
	return r;
}

/* The socket's address: rm.path. */
static void socket_address(struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	isc_fmt(a->sun_path, sizeof(a->sun_path), "%s", rm.path);
}

/* "<pid>.sock" -> pid, else 0. */
static int socket_pid(const char *name)
{
	int pid = 0;
	const char *p = name;
	for (; *p >= '0' && *p <= '9' && pid < (1 << 26); p++) {
		pid = pid * 10 + (*p - '0');
	}
	return p > name && strcmp(p, ".sock") == 0 ? pid : 0;
}

/*
 * Sockets of processes that died without removing theirs (SIGKILL): removed when a
 * process makes its own. Only a socket of ours whose pid is gone and that nobody
 * listens on (a connection is refused: a process in another pid namespace sharing the
 * directory still listens) goes. getdents64 on a stack buffer: no allocation.
 */
static void remove_stale(void)
{
	int d = open(rm.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char buf[4096];
	long n;
	while (d >= 0 && (n = syscall(SYS_getdents64, d, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			off += e->d_reclen;
			int pid = socket_pid(e->d_name);
			struct stat st;
			if (pid <= 0 || pid == isc_session.pid || kill(pid, 0) == 0 ||
			    errno != ESRCH ||
			    fstatat(d, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			    !S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
				continue;
			}
			struct sockaddr_un a;
			memset(&a, 0, sizeof(a));
			a.sun_family = AF_UNIX;
			isc_fmt(a.sun_path, sizeof(a.sun_path), "%s/%s", rm.dir, e->d_name);
			int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
			if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) != 0 &&
			    errno == ECONNREFUSED) {
				unlinkat(d, e->d_name, 0);
				isc_debug("control socket: removed %s (process %d is gone)",
					  a.sun_path, pid);
			}
			if (s >= 0) {
				close(s);
			}
		}
	}
	if (d >= 0) {
		close(d);
	}
}

static int make_socket(void)
{
	struct sockaddr_un a;
	struct stat st;
	int r = make_dir();
	if (r < 0) {
		return r;
	}
	remove_stale();
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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

/* One short line; a requester that does not read it (its buffer full) loses it. */
static void say(int c, const char *line)
{
	size_t n = strlen(line);
	while (n > 0) {
		ssize_t w = send(c, line, n, MSG_NOSIGNAL | MSG_DONTWAIT);
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

static void drop(int i)
{
	close(rm.cl[i].fd);
	rm.cl[i] = rm.cl[--rm.ncl];
}

static bool window_open(void)
{
	for (int i = 0; i < rm.ncl; i++) {
		if (rm.cl[i].window) {
			return true;
		}
	}
	return false;
}

/* A whole line from client i: answered; true when the client stays (its window). */
static bool answer(int i)
{
	struct client *c = &rm.cl[i];
	struct isc_window_req q;
	if (strncmp(c->line, "PING", 4) == 0) {
		pong(c->fd);
	} else if (strncmp(c->line, "CAPTURE", 7) != 0 || !parse_capture(c->line, &q)) {
		say(c->fd, "ERR usage: CAPTURE steps=N [step=NAME] | CAPTURE duration_ns=D\n");
	} else if (window_open() || isc_window_open(&q) < 0) {
		say(c->fd, "ERR busy: a capture window of this process is already open\n");
	} else {
		say(c->fd, "STARTED\n");
		c->window = true;
		return true;
	}
	return false;
}

/* What arrived from client i; false when it is done with (answered, gone, too long). */
static bool on_readable(int i)
{
	struct client *c = &rm.cl[i];
	if (c->window) {
		char b;
		ssize_t r = recv(c->fd, &b, 1, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			isc_window_cancel(); /* the requester gave up; the next poll resets */
			c->window = false;
			return false;
		}
		return true;
	}
	ssize_t r = recv(c->fd, c->line + c->n, sizeof(c->line) - 1 - c->n, MSG_DONTWAIT);
	if (r < 0) {
		return errno == EAGAIN || errno == EINTR;
	}
	if (r == 0) {
		return false;
	}
	c->n += (size_t)r;
	c->line[c->n] = '\0';
	char *nl = memchr(c->line, '\n', c->n);
	if (nl == NULL) {
		return c->n + 1 < sizeof(c->line);
	}
	*nl = '\0';
	return answer(i);
}

/* The window's end, told to its requester; one whose requester hung up is reset. */
static void check_window(void)
{
	char path[4096], out[4200];
	unsigned steps = 0;
	unsigned long long events = 0;
	enum isc_window_state s = isc_window_poll(path, sizeof(path), &steps, &events);
	if (s != ISC_WIN_WRITTEN && s != ISC_WIN_FAILED) {
		return;
	}
	for (int i = 0; i < rm.ncl; i++) {
		if (!rm.cl[i].window) {
			continue;
		}
		if (s == ISC_WIN_WRITTEN) {
			isc_fmt(out, sizeof(out), "OK path=%s steps=%u events=%llu\n", path, steps,
				events);
			say(rm.cl[i].fd, out);
		} else {
			say(rm.cl[i].fd, "ERR failed: the window's trace could not be written (see "
					 "the process's stderr with INFERSCOPE_DEBUG=1)\n");
		}
		drop(i);
		break;
	}
	isc_window_reset();
}

/* A new requester. Another user's is told so and closed; with every slot taken, the
 * reader that came first (the slowest, as deadlines are absolute) makes room. */
static void accept_one(uint64_t now)
{
	int c = accept4(rm.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0) {
		return;
	}
	if (!allowed(c)) {
		say(c, "ERR permission: not the process's user or root\n");
		close(c);
		return;
	}
	if (rm.ncl == CLIENTS) {
		int oldest = -1;
		for (int i = 0; i < rm.ncl; i++) {
			if (!rm.cl[i].window &&
			    (oldest < 0 || rm.cl[i].deadline < rm.cl[oldest].deadline)) {
				oldest = i;
			}
		}
		drop(oldest); /* at most one window: a reader is there */
	}
	struct client *n = &rm.cl[rm.ncl++];
	n->fd = c;
	n->window = false;
	n->deadline = now + REQUEST_NS;
	n->n = 0;
}

/* One round: every requester's bytes, the window, deadlines, new requesters. */
static void serve(const struct pollfd *p, int np)
{
	uint64_t now = isc_kernel_now();
	for (int k = 1; k < np; k++) {
		if (p[k].revents == 0) {
			continue;
		}
		for (int i = 0; i < rm.ncl; i++) {
			if (rm.cl[i].fd == p[k].fd) {
				if (!on_readable(i)) {
					drop(i);
				}
				break;
			}
		}
	}
	check_window();
	for (int i = rm.ncl; i-- > 0;) {
		if (!rm.cl[i].window && now >= rm.cl[i].deadline) {
			drop(i);
		}
	}
	if (p[0].revents & POLLIN) {
		accept_one(now);
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
	rm.ncl = 0;
	if (make_socket() < 0) {
		goto out;
	}
	for (;;) {
		struct pollfd p[CLIENTS + 1] = { { rm.fd, POLLIN, 0 } };
		int np = 1;
		for (int i = 0; i < rm.ncl; i++) {
			p[np++] = (struct pollfd){ rm.cl[i].fd, POLLIN, 0 };
		}
		int n = poll(p, (nfds_t)np, rm.ncl > 0 ? WINDOW_POLL_MS : POLL_MS);
		if (rm.ncl == 0 && atomic_exchange(&rm.stop, false)) {
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
		if (n > 0 && (p[0].revents & POLLIN)) {
			atomic_store(&rm.busy, true); /* before the accept: a pause waits */
		}
		serve(p, np);
		atomic_store(&rm.busy, rm.ncl > 0);
	}
	if (!rm.hidden) {
		close(rm.fd);
	}
	rm.fd = -1;
out:
	while (rm.ncl > 0) {
		drop(rm.ncl - 1);
	}
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
	socket_dir(rm.dir, sizeof(rm.dir), rm.xdg, (unsigned)geteuid());
	isc_fmt(rm.path, sizeof(rm.path), "%s/%d.sock", rm.dir, pid);
	if (make_dir() == -EPERM) {
		return; /* not ours: said, and no thread for a socket it cannot make */
	}
	atomic_store(&rm.alive, true);
	atomic_store(&rm.counted, false);
	/* joinable: a fork's pause joins it */
	int r = isc_threads_start(&rm.thread, 128 * 1024, listener_main, NULL);
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
