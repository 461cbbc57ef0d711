/* SPDX-License-Identifier: MIT */
/*
 * inferscope capture PID [--steps N | --duration D] [--step NAME] [-o FILE]
 *
 * Asks a running process (started with libinferscope.so) for a capture window over
 * its control socket (preload/remote.h), together with every process of its family
 * that runs the library too (its process group and its descendants: the API server,
 * the engine and the workers of a server), waits for their window traces, and
 * moves them to FILE (the asked process) and FILE's stem.<pid>.json (the others),
 * which inferscope-analyze merges when given together.
 *
 * Everything a server says is another process's word, and capture may run as root:
 * the socket is trusted only when its directory, the socket and the server's
 * credentials are the asked process's (connect_peer), and a file it names is taken
 * only as that process's window trace (take_window). docs/security.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/sockdir.h"
#include "launcher/launcher.h"

#define MAX_PROCS 256

struct peer {
	int pid;
	int fd;
	unsigned uid; /* the server's (SO_PEERCRED): the owner its window file must have */
	bool started, done;
	char path[PATH_MAX];
	char reply[PATH_MAX + 128];
};

struct capture_opts {
	int pid;
	unsigned steps;
	uint64_t duration_ns;
	const char *step;
	const char *out;
	uint64_t timeout_ns;
	bool only;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void isc_capture_usage(FILE *f)
{
	fprintf(f, "usage: inferscope capture PID [--steps N | --duration D] [--step NAME] "
		   "[-o FILE] [--timeout D] [--only]\n\n"
		   "  --steps N        a window of exactly N steps, from the next step boundary\n"
		   "  --duration D     a window of D (10s, 500ms), from now\n"
		   "  --step NAME      the step scope: a name, or a prefix ending in '*'\n"
		   "                   (default: the first outermost scope that opens)\n"
		   "  -o, --output F   the window's trace (default capture-PID.json)\n"
		   "  --timeout D      give up after D (default: the duration + 60s, or 300s)\n"
		   "  --only           ask PID alone, not its process group and descendants\n");
}

static int parse(int argc, char **argv, struct capture_opts *o)
{
	static const struct option longs[] = {
		{ "steps", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "step", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "only", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	int64_t v;
	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (!isc_parse_int(optarg, &v) || v <= 0 || v > 1000000) {
				fprintf(stderr,
					"inferscope capture: --steps wants a count, not '%s'\n",
					optarg);
				return -1;
			}
			o->steps = (unsigned)v;
			break;
		case 'd':
		case 't':
			if (!isc_parse_duration(optarg,
						c == 'd' ? &o->duration_ns : &o->timeout_ns) ||
			    (c == 'd' ? o->duration_ns : o->timeout_ns) == 0) {
				fprintf(stderr,
					"inferscope capture: --%s wants a duration such as 10s, "
					"not "
					"'%s'\n",
					c == 'd' ? "duration" : "timeout", optarg);
				return -1;
			}
			break;
		case 's':
			o->step = optarg;
			break;
		case 'o':
			o->out = optarg;
			break;
		case '1':
			o->only = true;
			break;
		case 'h':
			isc_capture_usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (optind + 1 != argc || !isc_parse_int(argv[optind], &v) || v <= 0 || v > 1 << 30) {
		fprintf(stderr, "inferscope capture: one process id expected\n");
		return -1;
	}
	o->pid = (int)v;
	if ((o->steps > 0) == (o->duration_ns > 0)) {
		fprintf(stderr,
			"inferscope capture: give --steps N or --duration D (one of them)\n");
		return -1;
	}
	if (o->step && (strlen(o->step) >= 128 || strpbrk(o->step, " \n") || o->steps == 0)) {
		fprintf(stderr, "inferscope capture: --step wants a name without spaces (and "
				"--steps)\n");
		return -1;
	}
	if (o->timeout_ns == 0) {
		o->timeout_ns = o->duration_ns ? o->duration_ns + 60000000000ull : 300000000000ull;
	}
	return 0;
}

/* /proc/PID/stat: ppid, pgid (fields 4 and 5, after the parenthesised name). */
static bool proc_stat(int pid, int *ppid, int *pgid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (f == NULL) {
		return false;
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && sscanf(p + 2, "%*c %d %d", ppid, pgid) == 2;
}

static unsigned proc_uid(int pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) == 0 ? (unsigned)st.st_uid : (unsigned)geteuid();
}

/* The target first, then its process group and its descendants. */
static size_t family(int target, bool only, int *out, size_t max)
{
	int ppid[MAX_PROCS * 16], pgid[MAX_PROCS * 16], pids[MAX_PROCS * 16];
	size_t n = 0, k = 0;
	int tp, tg;
	out[k++] = target;
	if (only || !proc_stat(target, &tp, &tg)) {
		return k;
	}
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n < MAX_PROCS * 16) {
		int pid = atoi(e->d_name);
		if (pid > 0 && pid != target && proc_stat(pid, &ppid[n], &pgid[n])) {
			pids[n++] = pid;
		}
	}
	if (d) {
		closedir(d);
	}
	/* descendants: repeat until no process joins (parents before children) */
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < n && k < max; i++) {
			bool in = false, parent_in = pgid[i] == tg;
			for (size_t j = 0; j < k; j++) {
				in |= out[j] == pids[i];
				parent_in |= out[j] == ppid[i];
			}
			if (!in && parent_in) {
				out[k++] = pids[i];
				grew = true;
			}
		}
	}
	return k;
}

/*
 * Connects to pid's control socket in the places the library may have made it
 * (common/sockdir.h), trusting only what the process's user owns: the directory (0700,
 * not a link), the socket (not writable by others), and the server at the other end,
 * whose credentials (SO_PEERCRED) must be the process's own pid and uid. A directory
 * or socket that fails is reported once (why) and never connected to; *uid is the
 * server's, which the file it names must belong to.
 */
static int connect_peer(int pid, unsigned *peer_uid, bool quiet)
{
	unsigned uid = proc_uid(pid), me = (unsigned)geteuid();
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dir[PATH_MAX], seen[3][PATH_MAX];
	int nseen = 0;
	for (int i = 0; i < 3; i++) {
		unsigned owner = 0;
		const char *why = "";
		bool dup = false;
		if (!isc_sockdir_candidate(i, xdg, uid, dir, sizeof(dir))) {
			continue;
		}
		for (int j = 0; j < nseen; j++) {
			dup |= strcmp(seen[j], dir) == 0;
		}
		if (dup) {
			continue;
		}
		snprintf(seen[nseen++], PATH_MAX, "%s", dir);
		int r = isc_sockdir_check(dir, uid, &owner, &why);
		/* the caller's own $XDG_RUNTIME_DIR is not another user's process's: no word */
		if (r == -EPERM && !quiet && !(i == 0 && owner == me)) {
			fprintf(stderr,
				"inferscope capture: refusing %s: %s (uid %u), not the user "
				"of process %d (uid %u); remove it\n",
				dir, why, owner, pid, uid);
		}
		struct sockaddr_un a;
		memset(&a, 0, sizeof(a));
		a.sun_family = AF_UNIX;
		if (r < 0 || (size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%d.sock", dir,
					      pid) >= sizeof(a.sun_path)) {
			continue;
		}
		r = isc_sockdir_check_socket(a.sun_path, uid, &why);
		if (r == -EPERM && !quiet) {
			fprintf(stderr, "inferscope capture: refusing %s: %s\n", a.sun_path, why);
		}
		if (r < 0) {
			continue;
		}
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
			if (fd >= 0) {
				close(fd);
			}
			continue;
		}
		struct ucred cr = { 0, (uid_t)-1, (gid_t)-1 };
		socklen_t n = sizeof(cr);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) != 0 || cr.pid != pid ||
		    cr.uid != uid || (me != 0 && me != cr.uid)) {
			if (!quiet) {
				fprintf(stderr,
					"inferscope capture: refusing %s: it is served by "
					"process %d of uid %u, not by process %d of uid %u\n",
					a.sun_path, (int)cr.pid, (unsigned)cr.uid, pid, uid);
			}
			close(fd);
			continue;
		}
		*peer_uid = cr.uid;
		return fd;
	}
	return -1;
}

/* Is libinferscope.so mapped in pid? (Tells "no library" from "not listening yet".) */
static bool has_library(int pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		found = strstr(line, "libinferscope") != NULL;
	}
	if (f) {
		fclose(f);
	}
	return found;
}

/* The asked process: a library that has just started may not listen yet (its thread
 * starts with the first recorded event): up to 2 s of retries before giving up. */
static int connect_target(int pid, unsigned *uid)
{
	int fd = connect_peer(pid, uid, true);
	for (int i = 0; fd < 0 && i < 20 && has_library(pid); i++) {
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
		fd = connect_peer(pid, uid, true);
	}
	return fd >= 0 ? fd : connect_peer(pid, uid, false); /* the last try says why */
}

/* Reads one line (blocking up to deadline); false at EOF or timeout. */
static bool read_reply(int fd, char *buf, size_t cap, uint64_t deadline)
{
	size_t n = 0;
	while (n + 1 < cap) {
		uint64_t now = mono_ns();
		struct pollfd p = { fd, POLLIN, 0 };
		if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000000u) + 1) <= 0) {
			return false;
		}
		ssize_t r = read(fd, buf + n, 1);
		if (r <= 0) {
			return false;
		}
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return true;
		}
		n++;
	}
	return false;
}

static int send_line(int fd, const char *line)
{
	size_t n = strlen(line);
	return send(fd, line, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* Is base "<anything>.<pid>.capture-<n>.json", the name a window of pid has
 * (preload/window.c)? */
static bool window_name(const char *base, int pid)
{
	char tail[48];
	const char *c = strstr(base, ".capture-");
	size_t n = (size_t)snprintf(tail, sizeof(tail), ".%d", pid);
	if (c == NULL || c - base <= (ptrdiff_t)n || memcmp(c - n, tail, n) != 0) {
		return false;
	}
	c += 9;
	size_t digits = strspn(c, "0123456789");
	return digits > 0 && strcmp(c + digits, ".json") == 0;
}

/* Copies in to a new file beside dst (O_CREAT|O_EXCL: never through a link, never onto
 * another's file), renamed over dst: a link at dst is replaced, never followed. */
static int copy_to(int in, const char *dst)
{
	char tmp[PATH_MAX + 64], buf[65536];
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", dst);
	int out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0) {
		return -1;
	}
	ssize_t r;
	while ((r = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)r) != r) {
			r = -1;
			break;
		}
	}
	int e = errno;
	if (close(out) != 0 && r == 0) {
		r = -1;
		e = errno;
	}
	if (r == 0 && rename(tmp, dst) == 0) {
		return 0;
	}
	e = r == 0 ? errno : e;
	unlink(tmp);
	errno = e;
	return -1;
}

/*
 * The window trace the server named, to dst. The name comes from another process, so
 * it is taken only as a file that process's library wrote: an absolute path named as
 * its window (window_name), opened without following a link (O_NOFOLLOW, relative to
 * its directory), and what was opened must be a regular file of the server's uid. It
 * is copied, not renamed, so that dst is the caller's file whoever the server is, then
 * the name is removed if it still is that file. *why says what was wrong.
 */
static int take_window(const char *src, int pid, unsigned uid, const char *dst, const char **why)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(src, '/');
	struct stat st, again;
	*why = NULL;
	if (src[0] != '/' || slash == NULL || !window_name(slash + 1, pid) ||
	    (size_t)(slash - src) >= sizeof(dir)) {
		*why = "not the name of a window trace of that process";
		return -1;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash == src ? 1 : slash - src), src);
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int in = d < 0 ? -1 : openat(d, slash + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int r = -1;
	if (in < 0) {
		*why = errno == ELOOP ? "a symbolic link" : NULL;
	} else if (fstat(in, &st) != 0) {
		*why = NULL;
	} else if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
	} else if (st.st_uid != uid) {
		*why = "not the process's user's file";
	} else {
		r = copy_to(in, dst);
	}
	if (r == 0 && fstatat(d, slash + 1, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
	    again.st_dev == st.st_dev && again.st_ino == st.st_ino) {
		unlinkat(d, slash + 1, 0);
	}
	int e = errno;
	if (in >= 0) {
		close(in);
	}
	if (d >= 0) {
		close(d);
	}
	errno = e;
	return r;
}

static void sibling_path(char *out, size_t cap, const char *file, int pid)
{
	size_t n = strlen(file);
	if (n > 5 && strcmp(file + n - 5, ".json") == 0) {
		n -= 5;
	}
	snprintf(out, cap, "%.*s.%d.json", (int)n, file, pid);
}

static int fail(const char *msg, int pid)
{
	fprintf(stderr, "inferscope capture: ");
	fprintf(stderr, msg, pid);
	fputc('\n', stderr);
	return 1;
}

/* Asks every peer; returns the number that started, or -1 after a message. */
static int start_all(struct peer *p, size_t n, const struct capture_opts *o, uint64_t deadline)
{
	char req[256];
	if (o->steps) {
		snprintf(req, sizeof(req), "CAPTURE steps=%u%s%s\n", o->steps,
			 o->step ? " step=" : "", o->step ? o->step : "");
	} else {
		snprintf(req, sizeof(req), "CAPTURE duration_ns=%llu\n",
			 (unsigned long long)o->duration_ns);
	}
	int started = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i].fd < 0) {
			continue;
		}
		if (send_line(p[i].fd, req) < 0 ||
		    !read_reply(p[i].fd, p[i].reply, sizeof(p[i].reply), deadline)) {
			strcpy(p[i].reply, "ERR no answer");
		}
		if (strcmp(p[i].reply, "STARTED") == 0) {
			p[i].started = true;
			started++;
		} else if (i == 0 || strncmp(p[i].reply, "ERR busy", 8) == 0) {
			fprintf(stderr, "inferscope capture: process %d: %s\n", p[i].pid,
				strncmp(p[i].reply, "ERR ", 4) == 0 ? p[i].reply + 4 : p[i].reply);
			return -1;
		}
	}
	return started;
}

int isc_capture_main(int argc, char **argv)
{
	struct capture_opts o;
	int pids[MAX_PROCS];
	static struct peer peers[MAX_PROCS];
	char defout[64], dst[PATH_MAX + 32];
	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "see inferscope capture --help\n");
		return 2;
	}
	if (kill(o.pid, 0) != 0 && errno == ESRCH) {
		return fail("no process with pid %d", o.pid);
	}
	if (o.out == NULL) {
		snprintf(defout, sizeof(defout), "capture-%d.json", o.pid);
		o.out = defout;
	}
	size_t n = family(o.pid, o.only, pids, MAX_PROCS), np = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned uid = 0;
		int fd = i == 0 ? connect_target(pids[i], &uid) : connect_peer(pids[i], &uid, true);
		char line[256] = "";
		uint64_t dl = mono_ns() + 2000000000ull;
		if (fd >= 0 &&
		    (send_line(fd, "PING\n") < 0 || !read_reply(fd, line, sizeof(line), dl) ||
		     strncmp(line, "INFERSCOPE ", 11) != 0)) {
			if (i == 0 && strncmp(line, "ERR ", 4) == 0) {
				close(fd);
				fprintf(stderr, "inferscope capture: process %d: %s\n", pids[i],
					line + 4);
				return 1;
			}
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			close(fd); /* one request per connection: connect again for the capture */
			peers[np].pid = pids[i];
			peers[np].fd = connect_peer(pids[i], &peers[np].uid, true);
			np += peers[np].fd >= 0;
		} else if (i == 0) {
			return fail(
				"process %d does not run libinferscope.so (no control socket "
				"answers: started without the preload, with INFERSCOPE_LISTEN=0, "
				"or by another user)",
				o.pid);
		}
	}
	uint64_t deadline = mono_ns() + o.timeout_ns;
	int started = start_all(peers, np, &o, deadline);
	if (started < 0) {
		return 1; /* closing the sockets abandons the windows that started */
	}
	int written = 0, failed = 0;
	for (size_t i = 0; i < np; i++) {
		struct peer *p = &peers[i];
		if (!p->started) {
			continue;
		}
		if (!read_reply(p->fd, p->reply, sizeof(p->reply), deadline)) {
			fprintf(stderr, "inferscope capture: process %d: %s\n", p->pid,
				mono_ns() >= deadline
					? "no window closed before the timeout (no step "
					  "boundary seen? try --duration)"
					: "the process ended before its window closed");
			failed++;
			continue;
		}
		if (strncmp(p->reply, "OK path=", 8) != 0) {
			fprintf(stderr, "inferscope capture: process %d: %s\n", p->pid, p->reply);
			failed++;
			continue;
		}
		char *path = p->reply + 8, *sp = strchr(path, ' ');
		if (sp) {
			*sp = '\0';
		}
		if (i == 0) {
			snprintf(dst, sizeof(dst), "%s", o.out);
		} else {
			sibling_path(dst, sizeof(dst), o.out, p->pid);
		}
		const char *why;
		if (take_window(path, p->pid, p->uid, dst, &why) < 0) {
			fprintf(stderr, "inferscope capture: process %d: refusing %s (%s)\n",
				p->pid, path, why ? why : strerror(errno));
			failed++;
			continue;
		}
		printf("process %d: %s (%s)\n", p->pid, dst, sp ? sp + 1 : "");
		written++;
	}
	for (size_t i = 0; i < np; i++) {
		close(peers[i].fd);
	}
	if (written > 1) {
		printf("analyse them together: inferscope-analyze %s", o.out);
		for (size_t i = 1; i < np; i++) {
			sibling_path(dst, sizeof(dst), o.out, peers[i].pid);
			printf(" %s", dst);
		}
		printf("\n");
	}
	return failed || written == 0 ? 1 : 0;
}
