/* SPDX-License-Identifier: MIT */
/*
 * inferscope: the launcher.
 *
 *   inferscope run [options] -- COMMAND [ARGS...]   profile COMMAND, then report
 *   inferscope analyze [ARGS...]                    same as inferscope-analyze
 *
 * `run` sets LD_PRELOAD to libinferscope.so's absolute path and INFERSCOPE_* from its
 * options, runs the command, forwards the signals sent to it, then runs the analyzer on
 * the trace (and the traces of the command's descendants) and exits with the command's
 * status - a command killed by a signal makes the launcher die of the same signal.
 * This file only parses options and wires processes (launcher-opts.c holds the table).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isc-config.h"
#include "launcher.h"

static pid_t child;

static void forward(int sig)
{
	if (child > 0) {
		kill(child, sig);
	}
}

/* Signals someone sends the launcher go to the command. SIGINT and SIGQUIT from a
 * terminal already reach the whole foreground process group: the launcher ignores
 * them, as system() does, so the command sees them once. */
static void setup_signals(void)
{
	static const int fwd[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH };
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++) {
		sigaction(fwd[i], &sa, NULL);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
}

static void restore_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
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

static bool find_file(char *out, size_t cap, const char *const *candidates)
{
	char dir[PATH_MAX];
	self_dir(dir, sizeof(dir));
	for (size_t i = 0; candidates[i]; i++) {
		char path[PATH_MAX * 2];
		if (candidates[i][0] == '/') {
			snprintf(path, sizeof(path), "%s", candidates[i]);
		} else {
			snprintf(path, sizeof(path), "%s/%s", dir, candidates[i]);
		}
		if (realpath(path, out) != NULL && access(out, R_OK) == 0) {
			(void)cap;
			return true;
		}
	}
	return false;
}

bool isc_launcher_find_library(char *out, size_t cap)
{
	const char *env = getenv("INFERSCOPE_LIBRARY");
	const char *const candidates[] = {
		env ? env : "../preload/libinferscope.so",	/* build tree */
		"../preload/libinferscope.so",
		"../" ISC_LIBDIR "/libinferscope.so",		/* installed */
		ISC_PREFIX "/" ISC_LIBDIR "/libinferscope.so",
		NULL,
	};
	return find_file(out, cap, candidates);
}

bool isc_launcher_find_analyzer(char *out, size_t cap)
{
	const char *const candidates[] = {
		"../analyzer/inferscope-analyze",	/* build tree */
		"inferscope-analyze",			/* installed beside us */
		ISC_PREFIX "/" ISC_BINDIR "/inferscope-analyze",
		NULL,
	};
	return find_file(out, cap, candidates);
}

static int run_command(char **argv)
{
	child = fork();
	if (child < 0) {
		fprintf(stderr, "inferscope: fork: %s\n", strerror(errno));
		return -1;
	}
	if (child == 0) {
		restore_signals();
		execvp(argv[0], argv);
		fprintf(stderr, "inferscope: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	int st;
	while (waitpid(child, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "inferscope: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	return st;
}

/* The trace of the command and those of its descendants written during this run. */
static size_t collect_traces(const char *output, time_t since, char **out, size_t max)
{
	char pattern[PATH_MAX + 16];
	size_t stem = strlen(output);
	size_t n = 0;
	struct stat st;

	if (stat(output, &st) == 0 && st.st_mtime >= since) {
		out[n++] = strdup(output);
	}
	if (stem > 5 && strcmp(output + stem - 5, ".json") == 0) {
		stem -= 5;
	}
	snprintf(pattern, sizeof(pattern), "%.*s.[0-9]*.json", (int)stem, output);
	glob_t g;
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
			if (strstr(g.gl_pathv[i], ".snapshot-") == NULL &&
			    stat(g.gl_pathv[i], &st) == 0 && st.st_mtime >= since) {
				out[n++] = strdup(g.gl_pathv[i]);
			}
		}
		globfree(&g);
	}
	return n;
}

static int report(const struct isc_launch_opts *o, time_t since)
{
	char analyzer[PATH_MAX];
	char *traces[256];
	size_t n = collect_traces(o->output_abs, since, traces, 256);
	if (n == 0) {
		fprintf(stderr, "inferscope: no trace was written to %s\n", o->output_abs);
		return 3;
	}
	if (!isc_launcher_find_analyzer(analyzer, sizeof(analyzer))) {
		fprintf(stderr, "inferscope: inferscope-analyze not found; trace: %s\n", traces[0]);
		return 3;
	}
	char *argv[300];
	size_t k = 0;
	argv[k++] = analyzer;
	argv[k++] = "--format";
	argv[k++] = (char *)o->format;
	if (o->report) {
		argv[k++] = "-o";
		argv[k++] = (char *)o->report;
	}
	for (size_t i = 0; i < n; i++) {
		argv[k++] = traces[i];
	}
	argv[k] = NULL;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execv(analyzer, argv);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	for (size_t i = 0; i < n; i++) {
		free(traces[i]);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
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
		fprintf(stderr, "inferscope: libinferscope.so not found (set INFERSCOPE_LIBRARY)\n");
		return 2;
	}
	if (isc_launcher_export(&o, lib) < 0) {
		return 2;
	}
	time_t since = time(NULL) - 1;
	setup_signals();
	int st = run_command(argv + first);
	if (st < 0) {
		return 2;
	}
	if (!o.no_report) {
		report(&o, since);
	}
	if (WIFSIGNALED(st)) {
		/* die of the same signal, so callers see the command's status */
		signal(WTERMSIG(st), SIG_DFL);
		fflush(NULL);
		kill(getpid(), WTERMSIG(st));
		return 128 + WTERMSIG(st);
	}
	return WEXITSTATUS(st);
}

static int cmd_analyze(int argc, char **argv)
{
	char analyzer[PATH_MAX];
	if (!isc_launcher_find_analyzer(analyzer, sizeof(analyzer))) {
		fprintf(stderr, "inferscope: inferscope-analyze not found\n");
		return 2;
	}
	argv[0] = analyzer;
	(void)argc;
	execv(analyzer, argv);
	fprintf(stderr, "inferscope: cannot run %s: %s\n", analyzer, strerror(errno));
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
		return cmd_run(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "analyze") == 0) {
		return cmd_analyze(argc - 1, argv + 1);
	}
	fprintf(stderr, "inferscope: unknown command '%s' (run, analyze)\n", argv[1]);
	isc_launcher_usage(stderr);
	return 2;
}
