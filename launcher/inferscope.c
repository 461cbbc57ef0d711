/* SPDX-License-Identifier: MIT */
/*
 * inferscope: the launcher.
 *
 *   inferscope run [options] -- COMMAND [ARGS...]   profile COMMAND, then report
 *   inferscope analyze [ARGS...]                    same as inferscope-analyze
 *   inferscope capture PID --steps N | --duration D  a window of a running process
 *   inferscope watch [ARGS...] DIR                  same as inferscope-watch (metrics)
 *
 * `run` sets LD_PRELOAD to libinferscope.so's absolute path and INFERSCOPE_* from its
 * options, runs the command, forwards the signals sent to it, then runs the analyzer on
 * the trace (and the traces of the command's descendants) and exits with the command's
 * status - a command killed by a signal makes the launcher die of the same signal.
 * This file only parses options and wires processes (launcher-opts.c holds the table).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/trace-name.h"
#include "isc-config.h"
#include "launcher/launcher.h"

/* The command while it runs, 0 before and after: a signal handler reads it. */
static volatile sig_atomic_t child;

static const int forwarded[] = { SIGTERM, SIGINT,  SIGQUIT,  SIGHUP, SIGUSR1,
				 SIGUSR2, SIGCONT, SIGWINCH, SIGALRM };
#define N_FORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

/*
 * A signal someone sends the launcher goes to the command. One the terminal sends
 * (Ctrl-C, Ctrl-\, a window resize: si_code SI_KERNEL) already reached the whole
 * foreground process group, the command included: forwarding it would deliver it
 * twice, so the launcher only stays alive to report.
 */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	pid_t p = (pid_t)child;
	if (p > 0 && si->si_code <= 0) {
		kill(p, sig);
	}
}

static void signals_mask(int how, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < N_FORWARDED; i++) {
		sigaddset(&set, forwarded[i]);
	}
	sigprocmask(how, &set, old);
}

/* The dispositions the launcher was started with: the command gets them back. */
static struct sigaction inherited[N_FORWARDED];

/*
 * Forwarding on: a handler for each signal, except those the launcher was started
 * ignoring (nohup, a background job of a non-interactive shell): they stay ignored,
 * here and in the command, as if the launcher were not there. Off: as inherited.
 */
static void signals_set(bool forwarding)
{
	static bool saved;
	if (!saved) {
		for (size_t i = 0; i < N_FORWARDED; i++) {
			sigaction(forwarded[i], NULL, &inherited[i]);
		}
		saved = true;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	for (size_t i = 0; i < N_FORWARDED; i++) {
		bool ignored = inherited[i].sa_handler == SIG_IGN;
		sigaction(forwarded[i], forwarding && !ignored ? &sa : &inherited[i], NULL);
	}
}

/* Directory of this executable, to find the library and the analyzer beside it. */
static void self_dir(char *out, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", out, cap - 1);
	out[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(out, '/');
	if (slash) {
		*slash = '\0';
	}
}

/*
 * The prefix this executable was installed under, found from its own location
 * (PREFIX/BINDIR/inferscope): a tree copied elsewhere or staged with DESTDIR keeps
 * working. Falls back to the configured prefix.
 */
static void runtime_prefix(char *out, size_t cap)
{
	char dir[PATH_MAX];
	self_dir(dir, sizeof(dir));
	size_t n = strlen(dir), b = strlen(ISC_BINDIR);
	if (ISC_BINDIR[0] != '/' && n > b && dir[n - b - 1] == '/' &&
	    strcmp(dir + n - b, ISC_BINDIR) == 0) {
		snprintf(out, cap, "%.*s", (int)(n - b - 1), dir);
	} else {
		snprintf(out, cap, "%s", ISC_PREFIX);
	}
}

/* dir/rel, or rel when it is absolute. */
static void join(char *out, size_t cap, const char *dir, const char *rel)
{
	if (rel[0] == '/') {
		snprintf(out, cap, "%s", rel);
	} else {
		snprintf(out, cap, "%s/%s", dir, rel);
	}
}

static bool usable(const char *path, char *out, int mode)
{
	return realpath(path, out) != NULL && access(out, mode) == 0;
}

bool isc_launcher_find_library(char *out, size_t cap)
{
	char dir[PATH_MAX], prefix[PATH_MAX], path[PATH_MAX * 3];
	(void)cap; /* out holds PATH_MAX bytes, as realpath(3) needs */
	const char *env = getenv("INFERSCOPE_LIBRARY");
	if (env != NULL && *env != '\0') {
		/* named by the user: that one or none */
		return usable(env, out, R_OK);
	}
	self_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/../preload/libinferscope.so", dir); /* build tree */
	if (usable(path, out, R_OK)) {
		return true;
	}
	runtime_prefix(prefix, sizeof(prefix));
	char libdir[PATH_MAX * 2];
	join(libdir, sizeof(libdir), prefix, ISC_LIBDIR);
	snprintf(path, sizeof(path), "%s/libinferscope.so", libdir); /* installed */
	if (usable(path, out, R_OK)) {
		return true;
	}
	join(libdir, sizeof(libdir), ISC_PREFIX, ISC_LIBDIR);
	snprintf(path, sizeof(path), "%s/libinferscope.so", libdir);
	return usable(path, out, R_OK);
}

bool isc_launcher_find_tool(const char *name, char *out, size_t cap)
{
	char dir[PATH_MAX], path[PATH_MAX * 3], bindir[PATH_MAX * 2];
	(void)cap;
	self_dir(dir, sizeof(dir));
	/* the build tree: inferscope-analyze in analyzer/, inferscope-watch in watch/ */
	const char *folder = strncmp(name, "inferscope-", 11) == 0 ? name + 11 : name;
	snprintf(path, sizeof(path), "%s/../%s/%s", dir,
		 strcmp(folder, "analyze") == 0 ? "analyzer" : folder, name);
	if (usable(path, out, X_OK)) {
		return true;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name); /* beside us */
	if (usable(path, out, X_OK)) {
		return true;
	}
	join(bindir, sizeof(bindir), ISC_PREFIX, ISC_BINDIR);
	snprintf(path, sizeof(path), "%s/%s", bindir, name);
	return usable(path, out, X_OK);
}

bool isc_launcher_find_analyzer(char *out, size_t cap)
{
	return isc_launcher_find_tool("inferscope-analyze", out, cap);
}

/* In the child: the environment, the signals and the mask the command should get. */
static void exec_command(char **argv, const struct isc_launch_opts *o, const char *lib,
			 const sigset_t *mask)
{
	signals_set(false);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (isc_launcher_export(o, lib) < 0) {
		fprintf(stderr, "inferscope: out of memory\n");
		_exit(126);
	}
	execvp(argv[0], argv);
	int e = errno;
	fprintf(stderr, "inferscope: cannot run %s: %s\n", argv[0], strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

/*
 * Runs the command; returns its wait status, or -1. The forwarded signals are blocked
 * around fork so that none arrives before the handler knows the child, and the child
 * is reaped only after `child` is cleared, so a handler never signals a reused pid.
 */
static int run_command(char **argv, const struct isc_launch_opts *o, const char *lib)
{
	sigset_t old;
	signals_mask(SIG_BLOCK, &old);
	signals_set(true);
	pid_t pid = fork();
	if (pid == 0) {
		exec_command(argv, o, lib, &old);
	}
	child = pid > 0 ? pid : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		fprintf(stderr, "inferscope: fork: %s\n", strerror(errno));
		return -1;
	}
	siginfo_t si;
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
	}
	signals_mask(SIG_BLOCK, NULL);
	child = 0;
	signals_set(false);
	sigprocmask(SIG_SETMASK, &old, NULL);
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "inferscope: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	return st;
}

#define MAX_TRACES 256

/* Runs inferscope-analyze on the run's traces; returns its exit status. */
static int report(const struct isc_launch_opts *o, const struct isc_trace_set *before)
{
	struct isc_trace_set after = { NULL, 0, 0 };
	const char *traces[MAX_TRACES];
	size_t n = 0;
	if (isc_traces_scan(o->output_abs, &after) == 0) {
		n = isc_traces_new(before, &after, traces, MAX_TRACES);
	}
	char analyzer[PATH_MAX];
	int st = 3 << 8;
	if (n == 0) {
		fprintf(stderr, "inferscope: no trace was written to %s\n", o->output_abs);
	} else if (!isc_launcher_find_analyzer(analyzer, sizeof(analyzer))) {
		fprintf(stderr, "inferscope: inferscope-analyze not found; trace: %s\n", traces[0]);
	} else {
		const char *argv[MAX_TRACES + 8];
		size_t k = 0;
		argv[k++] = analyzer;
		argv[k++] = "--format";
		argv[k++] = o->format;
		if (o->report) {
			argv[k++] = "-o";
			argv[k++] = o->report;
		}
		memcpy(argv + k, traces, n * sizeof(*traces));
		argv[k + n] = NULL;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execv(analyzer, (char *const *)argv);
			_exit(127);
		}
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
		}
		if (WIFSIGNALED(st)) {
			fprintf(stderr, "inferscope: inferscope-analyze died of %s\n",
				strsignal(WTERMSIG(st)));
		}
	}
	isc_traces_finish(&after);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

/* Dies of sig, as the command did: the caller's shell then sees the same status. */
static void die_of(int sig)
{
	/* the command may have dumped core; the launcher's own core would only mislead */
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	fflush(NULL);
	raise(sig);
}

static int cmd_run(int argc, char **argv)
{
	struct isc_launch_opts o;
	int first = isc_launcher_parse(argc, argv, &o);
	if (first < 0) {
		return 2;
	}
	char lib[PATH_MAX];
	if (!isc_launcher_find_library(lib, sizeof(lib))) {
		const char *env = getenv("INFERSCOPE_LIBRARY");
		fprintf(stderr, "inferscope: %s%s\n", env && *env ? env : "libinferscope.so",
			env && *env ? ": not a readable file (INFERSCOPE_LIBRARY)"
				    : " not found (set INFERSCOPE_LIBRARY)");
		return 2;
	}
	/* a run never replaces an earlier trace: the library would take a new name, and
	 * the report must read that one */
	char fresh[PATH_MAX];
	if (isc_trace_name_free(o.output_abs, fresh, sizeof(fresh)) > 1) {
		fprintf(stderr, "inferscope: %s exists: this run's trace is %s\n", o.output_abs,
			fresh);
		memcpy(o.output_abs, fresh, sizeof(fresh));
	}
	struct isc_trace_set before = { NULL, 0, 0 };
	if (!o.no_report && isc_traces_scan(o.output_abs, &before) < 0) {
		fprintf(stderr, "inferscope: out of memory\n");
		return 2;
	}
	int st = run_command(argv + first, &o, lib);
	if (st >= 0 && !o.no_report) {
		report(&o, &before);
	}
	isc_traces_finish(&before);
	if (st < 0) {
		return 2;
	}
	if (WIFSIGNALED(st)) {
		die_of(WTERMSIG(st));
		return 128 + WTERMSIG(st);
	}
	return WEXITSTATUS(st);
}

/* `inferscope analyze` and `inferscope watch`: the tool of that name, same arguments. */
static int cmd_tool(const char *name, int argc, char **argv)
{
	char tool[PATH_MAX];
	if (!isc_launcher_find_tool(name, tool, sizeof(tool))) {
		fprintf(stderr, "inferscope: %s not found\n", name);
		return 2;
	}
	argv[0] = tool;
	(void)argc;
	execv(tool, argv);
	fprintf(stderr, "inferscope: cannot run %s: %s\n", tool, strerror(errno));
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		isc_launcher_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("inferscope %s\n", ISC_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "run") == 0) {
		argv[1] = "inferscope run"; /* getopt's messages start with it */
		return cmd_run(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "analyze") == 0) {
		return cmd_tool("inferscope-analyze", argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "capture") == 0) {
		argv[1] = "inferscope capture";
		return isc_capture_main(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "watch") == 0) {
		return cmd_tool("inferscope-watch", argc - 1, argv + 1);
	}
	fprintf(stderr, "inferscope: unknown command '%s' (run, analyze, capture, watch)\n",
		argv[1]);
	isc_launcher_usage(stderr);
	return 2;
}
