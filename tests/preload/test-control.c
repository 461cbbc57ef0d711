/* SPDX-License-Identifier: MIT */
/*
 * The control socket and `inferscope capture` against a local user of another uid
 * (docs/security.md): a socket directory another user made first is refused aloud by
 * the library and by capture; capture trusts a socket only when its directory, the
 * socket and the server's credentials are the asked process's, and takes only a file
 * that process's library wrote, never writing through a link at its output; sockets
 * of killed processes are removed; a requester that trickles bytes delays nobody; a
 * set-user-ID program ignores its caller's INFERSCOPE_* variables.
 *
 * The other uid is a real one: the runner is root in CI and forks children that drop
 * to an unused uid (setresuid). As another user, the tests skip with a message.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

/* The peer's files on tmpfs (another file system than the test directory's). */
static const char *shm_dir(void)
{
	static char dir[64];
	snprintf(dir, sizeof(dir), "/dev/shm/isc-control-%d", (int)getpid());
	return dir;
}

/* Also after a failed assertion. */
static void teardown(void)
{
	isc_test_rmrf(shm_dir());
	isc_test_dir_teardown();
}

TestSuite(control, .init = isc_test_dir_setup, .fini = teardown, .timeout = 120);

/* An uid nobody has: the "other local user". */
static unsigned other_uid(void)
{
	unsigned u = 61000 + (unsigned)getpid() % 1000;
	while (getpwuid(u) != NULL) {
		u++;
	}
	return u;
}

static void need_root(void)
{
	if (geteuid() != 0) {
		cr_skip_test("needs root: a second uid is made by setresuid (CI runs as root)");
	}
}

/* A child that ends with the test (an assertion ends the test's process): set again
 * after a change of credentials, which clears it. */
static void die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void become(unsigned uid)
{
	if (setgroups(0, NULL) != 0 || setresgid(uid, uid, uid) != 0 ||
	    setresuid(uid, uid, uid) != 0) {
		_exit(125);
	}
	die_with_parent();
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static const char *read_text(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0) {
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	return n >= 0 ? buf : NULL;
}

static void make_dir(const char *path, mode_t mode, unsigned uid)
{
	cr_assert(mkdir(path, mode) == 0 || errno == EEXIST, "%s", path);
	cr_assert_eq(chmod(path, mode), 0);
	cr_assert_eq(chown(path, uid, uid), 0);
}

/* ---- a fake control peer: another uid's process that answers like the library ---- */

struct fake {
	pid_t pid;
	int count; /* read end: one byte per connection it accepted */
};

/*
 * Forks a server as uid that listens on sock (made in dir, which the parent prepared)
 * and answers PING as the library does and CAPTURE with STARTED then "OK path=" the
 * next of paths (each may contain %d: the server's pid). Returns once it listens.
 */
static void fake_start(struct fake *f, unsigned uid, const char *sock, const char *const paths[])
{
	int ready[2], cnt[2];
	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(cnt, O_CLOEXEC | O_NONBLOCK), 0);
	f->pid = fork();
	cr_assert(f->pid >= 0);
	if (f->pid == 0) {
		become(uid);
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
		if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 8) != 0) {
			_exit(124);
		}
		chmod(sock, 0600);
		if (write(ready[1], "r", 1) != 1) {
			_exit(123);
		}
		for (int k = 0;;) {
			int c = accept(s, NULL, NULL);
			char line[512] = "", out[4400];
			if (c < 0) {
				continue;
			}
			(void)!write(cnt[1], "c", 1);
			ssize_t n = read(c, line, sizeof(line) - 1);
			if (n > 0 && strncmp(line, "PING", 4) == 0) {
				snprintf(out, sizeof(out),
					 "INFERSCOPE pid=%d pgid=%d sid=%d mode=default\n",
					 (int)getpid(), (int)getpgid(0), (int)getsid(0));
				(void)!write(c, out, strlen(out));
			} else if (n > 0 && paths[k] != NULL) {
				char path[4096];
				snprintf(path, sizeof(path), paths[k++], (int)getpid());
				snprintf(out, sizeof(out), "STARTED\nOK path=%s steps=1 events=1\n",
					 path);
				(void)!write(c, out, strlen(out));
			}
			close(c);
		}
	}
	close(ready[1]);
	close(cnt[1]);
	f->count = cnt[0];
	char b;
	cr_assert_eq(read(ready[0], &b, 1), 1, "the fake peer did not listen on %s", sock);
	close(ready[0]);
}

static int fake_connections(struct fake *f)
{
	char buf[64];
	int n = 0;
	ssize_t r;
	while ((r = read(f->count, buf, sizeof(buf))) > 0) {
		n += (int)r;
	}
	return n;
}

static void fake_stop(struct fake *f)
{
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
	close(f->count);
}

/* `inferscope capture PID --duration 100ms --only [-o OUT]` in cwd with this
 * XDG_RUNTIME_DIR; returns the exit status. */
static int capture(int pid, const char *xdg, const char *out, const char *cwd, struct isc_run *r)
{
	char p[16], env0[4200];
	snprintf(p, sizeof(p), "%d", pid);
	snprintf(env0, sizeof(env0), "XDG_RUNTIME_DIR=%s", xdg);
	const char *argv[] = { ISC_LAUNCHER_PATH, "capture",	     p,	  "--duration", "100ms",
			       "--only",	  out ? "-o" : NULL, out, NULL };
	const char *env[] = { env0, NULL };
	cr_assert_eq(isc_test_run(argv, env, false, cwd, r), 0);
	return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
}

/* A process of the runner's uid that runs no library: a target to ask for. */
static pid_t sleeper(void)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		die_with_parent();
		pause();
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The test directory, reachable (not readable) by the other uid. */
static const char *open_test_dir(void)
{
	cr_assert_eq(chmod(isc_test_dir(), 0711), 0);
	return isc_test_dir();
}

/* ---- a preloaded server (wl-server) ---- */

struct server {
	pid_t pid;
	FILE *out;
};

static void server_start(struct server *s, const char *xdg, double seconds)
{
	int p[2];
	char secs[32];
	snprintf(secs, sizeof(secs), "%g", seconds);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	s->pid = fork();
	cr_assert(s->pid >= 0);
	if (s->pid == 0) {
		const char *argv[] = { isc_test_workload("wl-server"), "2000", "1", secs, NULL };
		die_with_parent();
		dup2(p[1], 1);
		int e = open(isc_test_in_dir("server.err"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(e, 2);
		if (chdir(isc_test_dir()) != 0) {
			_exit(126);
		}
		setenv("LD_PRELOAD", isc_test_preload(), 1);
		setenv("XDG_RUNTIME_DIR", xdg, 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	s->out = fdopen(p[0], "r");
	char line[64] = "";
	cr_assert_not_null(fgets(line, sizeof(line), s->out), "the server did not start");
	cr_assert_eq(strncmp(line, "ready ", 6), 0, "server said: %s", line);
}

static void server_stop(struct server *s)
{
	reap(s->pid);
	fclose(s->out);
}

/* Until path exists (10 s at most). */
static bool appears(const char *path)
{
	struct stat st;
	for (int i = 0; i < 1000; i++) {
		if (lstat(path, &st) == 0) {
			return true;
		}
		usleep(10000);
	}
	return false;
}

/* Until file contains text (10 s at most). */
static bool file_says(const char *path, const char *text)
{
	for (int i = 0; i < 1000; i++) {
		const char *t = read_text(path);
		if (t && strstr(t, text)) {
			return true;
		}
		usleep(10000);
	}
	return false;
}

/* ---- tests ---- */

Test(control, a_directory_another_user_made_first_is_refused_by_both)
{
	need_root();
	unsigned u = other_uid();
	const char *t = open_test_dir();
	char run[4200], dir[4300], sock[4400], secret[4200], msg[4600];
	snprintf(run, sizeof(run), "%s/run", t);
	snprintf(dir, sizeof(dir), "%s/inferscope", run);
	snprintf(secret, sizeof(secret), "%s/secret", t);
	make_dir(run, 0755, 0);
	make_dir(dir, 0700, u); /* the squatter's: it got there first */
	write_file(secret, "root only\n", 0600);

	struct server s;
	server_start(&s, run, 30);
	snprintf(msg, sizeof(msg), "control socket: %s is owned by another user (uid %u)", dir, u);
	cr_assert(file_says(isc_test_in_dir("server.err"), msg),
		  "the library said nothing about the directory it refused: %s",
		  read_text(isc_test_in_dir("server.err")));

	/* the squatter answers for the victim at the victim's socket name */
	snprintf(sock, sizeof(sock), "%s/%d.sock", dir, (int)s.pid);
	const char *paths[] = { secret, NULL };
	struct fake f;
	fake_start(&f, u, sock, paths);
	struct isc_run r;
	cr_assert_eq(capture(s.pid, run, isc_test_in_dir("out.json"), t, &r), 1, "%s", r.err);
	snprintf(msg, sizeof(msg), "refusing %s: owned by another user (uid %u)", dir, u);
	cr_assert(strstr(r.err, msg) != NULL, "%s", r.err);
	cr_assert_eq(fake_connections(&f), 0, "capture talked to the squatter");
	cr_assert_str_eq(read_text(secret), "root only\n");
	cr_assert(!isc_test_exists(isc_test_in_dir("out.json")));
	isc_run_free(&r);
	fake_stop(&f);
	server_stop(&s);
}

Test(control, a_socket_served_by_another_uid_is_refused)
{
	need_root();
	unsigned u = other_uid();
	const char *t = open_test_dir();
	char run[4200], dir[4300], sock[4400], secret[4200], msg[4600];
	snprintf(run, sizeof(run), "%s/run", t);
	snprintf(dir, sizeof(dir), "%s/inferscope", run);
	snprintf(secret, sizeof(secret), "%s/secret", t);
	make_dir(run, 0755, 0);
	make_dir(dir, 0777, 0);
	write_file(secret, "root only\n", 0600);
	pid_t target = sleeper();
	snprintf(sock, sizeof(sock), "%s/%d.sock", dir, (int)target);
	const char *paths[] = { secret, NULL };
	struct fake f;
	fake_start(&f, u, sock, paths);
	/* directory and socket now look root's: only the server's credentials tell */
	cr_assert_eq(chmod(dir, 0700), 0);
	cr_assert_eq(lchown(sock, 0, 0), 0);

	struct isc_run r;
	cr_assert_eq(capture(target, run, isc_test_in_dir("out.json"), t, &r), 1, "%s", r.err);
	snprintf(msg, sizeof(msg), "served by process %d of uid %u, not by process %d of uid 0",
		 (int)f.pid, u, (int)target);
	cr_assert(strstr(r.err, msg) != NULL, "%s", r.err);
	cr_assert_str_eq(read_text(secret), "root only\n");
	cr_assert(!isc_test_exists(isc_test_in_dir("out.json")));
	isc_run_free(&r);
	fake_stop(&f);
	reap(target);
}

Test(control, capture_takes_only_the_window_file_of_the_asked_process)
{
	need_root();
	unsigned u = other_uid();
	const char *t = open_test_dir();
	char run[4200], dir[4300], sock[4400], secret[4200], peer[4200], link[4300];
	char rootfile[4300], legit[128], cwd[4200], victim[4300], out[4300];
	const char *shm = shm_dir();
	snprintf(run, sizeof(run), "%s/run", t);
	snprintf(dir, sizeof(dir), "%s/inferscope", run);
	snprintf(secret, sizeof(secret), "%s/secret", t);
	snprintf(peer, sizeof(peer), "%s/peer", t);
	snprintf(cwd, sizeof(cwd), "%s/cwd", t);
	make_dir(run, 0755, 0);
	make_dir(dir, 0700, u);
	make_dir(peer, 0755, u);
	make_dir(cwd, 0777, 0);
	make_dir(isc_test_in_dir("rootonly"), 0700, 0);
	snprintf(victim, sizeof(victim), "%s/rootonly/victim", t);
	write_file(secret, "root only\n", 0600);
	write_file(victim, "root only\n", 0600);
	/* the peer's own files: another directory (tmpfs: rename cannot move them) */
	make_dir(shm, 0755, u);
	snprintf(link, sizeof(link), "%s/evil.%%d.capture-1.json", peer);
	snprintf(rootfile, sizeof(rootfile), "%s/root.%%d.capture-2.json", peer);
	snprintf(legit, sizeof(legit), "%s/w.%%d.capture-3.json", shm);
	const char *paths[] = { secret, link, rootfile, legit, NULL };
	snprintf(sock, sizeof(sock), "%s/placeholder.sock", dir);
	struct fake f;
	/* the peer listens at its own pid's name: bind a name, then give it the right one */
	fake_start(&f, u, sock, paths);
	char real[4400];
	snprintf(real, sizeof(real), "%s/%d.sock", dir, (int)f.pid);
	cr_assert_eq(rename(sock, real), 0);
	char name[4400];
	snprintf(name, sizeof(name), link, (int)f.pid);
	cr_assert_eq(symlink(secret, name), 0);
	cr_assert_eq(lchown(name, u, u), 0);
	snprintf(name, sizeof(name), rootfile, (int)f.pid);
	write_file(name, "root's\n", 0644);
	snprintf(name, sizeof(name), legit, (int)f.pid);
	write_file(name, "{\"peer\":1}\n", 0644);
	cr_assert_eq(chown(name, u, u), 0);

	struct isc_run r;
	const char *why[] = { "not the name of a window trace", "a symbolic link",
			      "not the process's user's file" };
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(capture(f.pid, run, isc_test_in_dir("out.json"), t, &r), 1, "%s",
			     r.err);
		cr_assert(strstr(r.err, why[i]) != NULL, "reply %d: %s", i, r.err);
		cr_assert(!isc_test_exists(isc_test_in_dir("out.json")));
		cr_assert_str_eq(read_text(secret), "root only\n");
		isc_run_free(&r);
	}
	snprintf(name, sizeof(name), rootfile, (int)f.pid);
	cr_assert_str_eq(read_text(name), "root's\n", "the root-owned file was left");

	/* the default output name is a link into a root-only directory */
	snprintf(out, sizeof(out), "%s/capture-%d.json", cwd, (int)f.pid);
	cr_assert_eq(symlink(victim, out), 0);
	cr_assert_eq(capture(f.pid, run, NULL, cwd, &r), 0, "%s", r.err);
	cr_assert_str_eq(read_text(victim), "root only\n", "written through the link");
	struct stat st;
	cr_assert_eq(lstat(out, &st), 0);
	cr_assert(S_ISREG(st.st_mode), "the link was replaced by the trace");
	cr_assert_eq(st.st_uid, 0u, "the copy is the caller's file");
	cr_assert_eq(st.st_mode & 0777, 0600);
	cr_assert_str_eq(read_text(out), "{\"peer\":1}\n");
	snprintf(name, sizeof(name), legit, (int)f.pid);
	cr_assert(!isc_test_exists(name), "the window file was moved");
	isc_run_free(&r);
	fake_stop(&f);
}

/* A socket file at dir/name bound by nobody (its process is gone). */
static void dead_socket(const char *path)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0, "%s", path);
	close(s);
}

static int dead_pid(void)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	return (int)pid;
}

Test(control, sockets_of_killed_processes_are_removed)
{
	need_root();
	unsigned u = other_uid();
	char dir[4200], gone[4300], notsock[4300], others[4300], live[4300], mine[4300];
	snprintf(dir, sizeof(dir), "%s/inferscope", isc_test_dir());
	make_dir(dir, 0700, 0);
	snprintf(gone, sizeof(gone), "%s/%d.sock", dir, dead_pid());
	snprintf(notsock, sizeof(notsock), "%s/%d.sock", dir, dead_pid());
	snprintf(others, sizeof(others), "%s/%d.sock", dir, dead_pid());
	snprintf(live, sizeof(live), "%s/%d.sock", dir, (int)getpid());
	dead_socket(gone);
	write_file(notsock, "", 0600);
	dead_socket(others);
	cr_assert_eq(lchown(others, u, u), 0);
	dead_socket(live); /* the runner's pid: alive */

	struct server s;
	server_start(&s, isc_test_dir(), 30);
	snprintf(mine, sizeof(mine), "%s/%d.sock", dir, (int)s.pid);
	cr_assert(appears(mine), "the server's socket never appeared");
	cr_assert(!isc_test_exists(gone), "the socket of a killed process is still there");
	cr_assert(isc_test_exists(notsock), "a file that is not a socket was removed");
	cr_assert(isc_test_exists(others), "another user's socket was removed");
	cr_assert(isc_test_exists(live), "the socket of a live pid was removed");
	server_stop(&s);
}

/* ---- slow requesters ---- */

#define TRICKLERS 3

struct trickle {
	const char *sock;
	atomic_bool stop, running;
	atomic_int connected, cut;
};

/* TRICKLERS connections that send a byte each every 100 ms, no newline, for 30 s at
 * most; counts those the server closed. */
static void *trickle_main(void *arg)
{
	struct trickle *t = arg;
	int fd[TRICKLERS];
	bool cut[TRICKLERS] = { false };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	memcpy(a.sun_path, t->sock, strnlen(t->sock, sizeof(a.sun_path) - 1));
	for (int i = 0; i < TRICKLERS; i++) {
		fd[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(fd[i], (struct sockaddr *)&a, sizeof(a)) != 0 ||
		    send(fd[i], "P", 1, MSG_NOSIGNAL) != 1) {
			cut[i] = true;
			atomic_fetch_add(&t->cut, 1);
		}
		atomic_fetch_add(&t->connected, 1);
	}
	for (int k = 0; k < 300 && !atomic_load(&t->stop); k++) {
		usleep(100000);
		for (int i = 0; i < TRICKLERS; i++) {
			char b;
			if (cut[i]) {
				continue;
			}
			if (recv(fd[i], &b, 1, MSG_DONTWAIT) == 0 ||
			    send(fd[i], "I", 1, MSG_NOSIGNAL) != 1) {
				cut[i] = true;
				atomic_fetch_add(&t->cut, 1);
			}
		}
	}
	atomic_store(&t->running, false);
	for (int i = 0; i < TRICKLERS; i++) {
		close(fd[i]);
	}
	return NULL;
}

Test(control, a_trickling_requester_delays_nobody)
{
	struct server s;
	char dir[4200], sock[4300], line[256] = "";
	snprintf(dir, sizeof(dir), "%s/inferscope", isc_test_dir());
	server_start(&s, isc_test_dir(), 60);
	snprintf(sock, sizeof(sock), "%s/%d.sock", dir, (int)s.pid);
	cr_assert(appears(sock));
	struct trickle t = { .sock = sock };
	atomic_store(&t.running, true);
	pthread_t th;
	pthread_create(&th, NULL, trickle_main, &t);
	while (atomic_load(&t.connected) < TRICKLERS) {
		usleep(1000);
	}
	/* a PING behind them is answered while they still trickle */
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	memcpy(a.sun_path, sock, strnlen(sock, sizeof(a.sun_path) - 1));
	cr_assert_eq(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(send(c, "PING\n", 5, MSG_NOSIGNAL), 5);
	struct pollfd p = { c, POLLIN, 0 };
	cr_assert_eq(poll(&p, 1, 40000), 1, "no answer to PING");
	cr_assert(read(c, line, sizeof(line) - 1) > 0);
	bool during = atomic_load(&t.running);
	close(c);
	cr_assert_eq(strncmp(line, "INFERSCOPE pid=", 15), 0, "%s", line);
	cr_assert(during, "the PING was answered only after the trickling requesters ended");
	/* and each of them is cut at its deadline, bytes arriving or not */
	while (atomic_load(&t.running) && atomic_load(&t.cut) < TRICKLERS) {
		usleep(10000);
	}
	int cut = atomic_load(&t.cut);
	atomic_store(&t.stop, true);
	pthread_join(th, NULL);
	cr_assert_eq(cut, TRICKLERS, "only %d of %d trickling requesters were cut", cut, TRICKLERS);
	server_stop(&s);
}

/* ---- set-user-ID ---- */

Test(control, a_set_user_id_program_ignores_the_callers_variables)
{
	need_root();
	unsigned u = other_uid();
	const char *t = open_test_dir();
	char prog[4300], bin[4200], guarded[4200], tmp[4200], want[4300], name[64];
	char spare[2][128], cmd[8800], env0[4400];
	snprintf(bin, sizeof(bin), "%s/bin", t);
	snprintf(guarded, sizeof(guarded), "%s/guarded", t);
	snprintf(tmp, sizeof(tmp), "%s/tmp", t);
	make_dir(bin, 0755, 0);
	make_dir(guarded, 0700, 0);
	make_dir(tmp, 0777, 0);
	snprintf(prog, sizeof(prog), "%s/wl-dlopen", bin);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", isc_test_workload("wl-dlopen"), prog);
	cr_assert_eq(system(cmd), 0);
	/* a name in a root-only directory; where that cannot be written (the library asks
	 * access(), which answers for the real uid), the library's fallback directories
	 * with the caller's file name (the loader drops TMPDIR in such a program) */
	snprintf(name, sizeof(name), "isc-chosen-%d.json", (int)getpid());
	snprintf(want, sizeof(want), "%s/%s", guarded, name);
	snprintf(spare[0], sizeof(spare[0]), "/tmp/%s", name);
	snprintf(spare[1], sizeof(spare[1]), "/dev/shm/%s", name);
	snprintf(env0, sizeof(env0), "INFERSCOPE_OUTPUT=%s", want);
	const char *argv[] = { prog, isc_test_preload(), NULL };
	const char *env[] = { env0, NULL };
	struct isc_run r;

	/* not set-user-ID, run by root: the variable is obeyed (the test can fail) */
	cr_assert_eq(isc_test_run(argv, env, false, t, &r), 0);
	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s", r.err);
	cr_assert(isc_test_exists(want), "the library loaded by dlopen wrote no trace");
	isc_run_free(&r);
	unlink(want);

	/* set-user-ID root, run by the other user: the caller's variables are ignored */
	cr_assert_eq(chmod(prog, 04755), 0);
	int err[2];
	cr_assert_eq(pipe(err), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		become(u);
		dup2(err[1], 2);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		if (chdir(tmp) != 0) {
			_exit(126);
		}
		char *const e[] = { env0, "INFERSCOPE_DEBUG=2", NULL };
		execve(prog, (char *const *)argv, e);
		_exit(127);
	}
	close(err[1]);
	char said[4096] = "";
	ssize_t n = read(err[0], said, sizeof(said) - 1);
	said[n > 0 ? n : 0] = '\0';
	close(err[0]);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, said);
	bool wrote = isc_test_exists(want), fell_back[2];
	for (int i = 0; i < 2; i++) {
		fell_back[i] = isc_test_exists(spare[i]);
		unlink(spare[i]);
	}
	cr_assert(!wrote, "a set-user-ID program wrote the trace where its caller asked");
	cr_assert(!fell_back[0] && !fell_back[1],
		  "a set-user-ID program made a file of the caller's name in /tmp or /dev/shm");
	cr_assert_str_eq(said, "", "the library spoke in a set-user-ID program: %s", said);
	struct stat sb;
	cr_assert_eq(stat(guarded, &sb), 0);
	cr_assert_eq(sb.st_nlink, 2u, "the set-user-ID program created files in %s", guarded);
}
