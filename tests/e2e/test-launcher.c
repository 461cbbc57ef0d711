/* SPDX-License-Identifier: MIT */
/*
 * `inferscope run`: exit status and death by signal passed through, signals forwarded,
 * the report after the command, its options, bad values, a command that cannot run,
 * and the traces of the command's children merged into one report.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

TestSuite(launcher, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 60);

/* inferscope ARGS... -- e2e-prog PROG_ARGS..., run in isc_test_dir(); argv ends at NULL. */
static void launch(struct isc_run *r, const char *const *args, const char *const *env)
{
	const char *argv[32];
	size_t n = 0;
	argv[n++] = isc_test_env("ISC_LAUNCHER");
	for (size_t i = 0; args[i] != NULL && n < 30; i++) {
		argv[n++] = strcmp(args[i], "PROG") == 0 ? isc_test_env("ISC_E2E_PROG") : args[i];
	}
	argv[n] = NULL;
	cr_assert_eq(isc_test_run(argv, env, false, isc_test_dir(), r), 0);
}

#define LAUNCH(r, ...) launch((r), (const char *const[]){ __VA_ARGS__, NULL }, NULL)

static int exit_status(const struct isc_run *r)
{
	cr_assert(WIFEXITED(r->status), "status %#x; stderr: %s", r->status, r->err);
	return WEXITSTATUS(r->status);
}

Test(launcher, exit_status_passes_through)
{
	static const char *const codes[] = { "0", "3", "42" };
	for (size_t i = 0; i < 3; i++) {
		struct isc_run r;
		LAUNCH(&r, "run", "--no-report", "--", "PROG", "exit", codes[i]);
		cr_assert_eq(exit_status(&r), atoi(codes[i]), "%s", r.err);
		isc_run_free(&r);
	}
}

Test(launcher, death_by_signal_passes_through)
{
	static const int sigs[] = { SIGTERM, SIGKILL, SIGABRT };
	for (size_t i = 0; i < 3; i++) {
		char num[8];
		snprintf(num, sizeof(num), "%d", sigs[i]);
		struct isc_run r;
		LAUNCH(&r, "run", "--no-report", "--", "PROG", "raise", num);
		cr_assert(WIFSIGNALED(r.status), "%s: status %#x", strsignal(sigs[i]), r.status);
		cr_assert_eq(WTERMSIG(r.status), sigs[i]);
		cr_assert(!WCOREDUMP(r.status), "the launcher leaves no core of its own");
		isc_run_free(&r);
	}
}

static bool wait_for(const char *path)
{
	for (int i = 0; i < 1000; i++) {
		if (isc_test_exists(path)) {
			return true;
		}
		usleep(10000);
	}
	return false;
}

static size_t lines_in(const char *path)
{
	size_t n = 0;
	FILE *f = fopen(path, "r");
	for (int c; f != NULL && (c = fgetc(f)) != EOF;) {
		n += c == '\n';
	}
	if (f != NULL) {
		fclose(f);
	}
	return n;
}

static bool wait_lines(const char *path, size_t n)
{
	for (int i = 0; i < 1000; i++) {
		if (lines_in(path) >= n) {
			return true;
		}
		usleep(10000);
	}
	return false;
}

/* Signals sent to the launcher (by kill, as a supervisor sends them) reach the command. */
Test(launcher, signals_are_forwarded)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (chdir(isc_test_dir()) != 0) {
			_exit(125);
		}
		unsetenv("LD_PRELOAD");
		execl(isc_test_env("ISC_LAUNCHER"), "inferscope", "run", "--no-report", "--",
		      isc_test_env("ISC_E2E_PROG"), "wait-signal", isc_test_dir(), (char *)NULL);
		_exit(126);
	}
	cr_assert(wait_for(isc_test_in_dir("ready")), "the command never started");
	/* one at a time: two pending signals would be delivered by number, not in order */
	static const int sigs[] = { SIGUSR1, SIGINT, SIGTERM };
	for (size_t i = 0; i < 3; i++) {
		kill(pid, sigs[i]);
		cr_assert(wait_lines(isc_test_in_dir("got"), i + 1),
			  "signal %d never reached the command", sigs[i]);
	}
	int st = 0;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 7,
		  "the command catches SIGTERM and exits 7; status %#x", st);
	char *got = NULL;
	FILE *f = fopen(isc_test_in_dir("got"), "r");
	cr_assert_not_null(f);
	size_t cap = 0;
	cr_assert_gt(getdelim(&got, &cap, '\0', f), 0);
	fclose(f);
	char want[64];
	snprintf(want, sizeof(want), "%d\n%d\n%d\n", SIGUSR1, SIGINT, SIGTERM);
	cr_assert_str_eq(got, want, "each signal once, in order");
	free(got);
}

/* nohup: a signal the launcher was started ignoring stays ignored in the command. */
Test(launcher, ignored_signals_stay_ignored)
{
	struct isc_run r;
	signal(SIGHUP, SIG_IGN);
	LAUNCH(&r, "run", "--no-report", "--", "/bin/sh", "-c", "kill -HUP $$; exit 5");
	signal(SIGHUP, SIG_DFL);
	cr_assert_eq(exit_status(&r), 5, "the command survived its SIGHUP");
	isc_run_free(&r);
	LAUNCH(&r, "run", "--no-report", "--", "/bin/sh", "-c", "kill -HUP $$; exit 5");
	cr_assert(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGHUP, "not ignored: dies");
	isc_run_free(&r);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

Test(launcher, report_follows_the_command)
{
	struct isc_run r;
	LAUNCH(&r, "run", "--", "PROG", "work", "150");
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	const char *done = strstr(r.out, "e2e work done");
	const char *rep = strstr(r.out, "# InferScope report");
	cr_assert(done != NULL && rep != NULL, "%s", r.out);
	cr_assert_lt(done, rep, "the command's output first, then the report");
	cr_assert_eq(count(r.out, "| input |"), 1);
	cr_assert(strstr(r.out, isc_test_in_dir("trace.json")) != NULL,
		  "the report names the trace");
	cr_assert(strstr(r.out, "e2e\\_work") != NULL, "the command's scope is in the report");
	isc_run_free(&r);
}

Test(launcher, no_report_output_and_report_file)
{
	struct isc_run r;
	LAUNCH(&r, "run", "--no-report", "--", "PROG", "work", "120");
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "# InferScope report") == NULL);
	cr_assert(isc_test_exists(isc_test_in_dir("trace.json")), "the trace is still written");
	isc_run_free(&r);

	cr_assert_eq(mkdir(isc_test_in_dir("sub"), 0755), 0);
	LAUNCH(&r, "run", "-o", "sub/t.json", "-f", "json", "-r", "report.json", "--", "PROG",
	       "work", "120");
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	cr_assert(isc_test_exists(isc_test_in_dir("sub/t.json")), "-o names the trace");
	cr_assert(strstr(r.out, "analysis_version") == NULL, "-r takes the report off stdout");
	yajl_val rep = isc_test_load_json(isc_test_in_dir("report.json"));
	cr_assert_not_null(rep, "-f json -r report.json");
	yajl_val in = isc_trace_get(rep, "inputs");
	cr_assert(YAJL_IS_ARRAY(in) && in->u.array.len == 1);
	cr_assert_str_eq(isc_trace_str(in->u.array.values[0], "path"),
			 isc_test_in_dir("sub/t.json"));
	yajl_tree_free(rep);
	isc_run_free(&r);
}

Test(launcher, children_traces_are_merged)
{
	struct isc_run r;
	LAUNCH(&r, "run", "--", "PROG", "fork", "150");
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	cr_assert_eq(count(r.out, "| input |"), 2, "the command's and its child's trace: %s",
		     r.out);
	cr_assert(strstr(r.out, "e2e\\_child") != NULL && strstr(r.out, "e2e\\_parent") != NULL);
	isc_run_free(&r);
	/* a second run in the same place reports its own traces only, under a new name it
	 * announces: the first run's trace stays */
	struct stat first;
	cr_assert_eq(stat(isc_test_in_dir("trace.json"), &first), 0);
	LAUNCH(&r, "run", "--", "PROG", "work", "120");
	cr_assert_eq(exit_status(&r), 0);
	cr_assert_eq(count(r.out, "| input |"), 1, "%s\n%s", r.out, r.err);
	cr_assert(strstr(r.out, "e2e\\_child") == NULL);
	cr_assert(strstr(r.err, "trace.json exists: this run's trace is ") != NULL, "%s", r.err);
	cr_assert(strstr(r.err, "/trace-2.json") != NULL, "%s", r.err);
	cr_assert(strstr(r.out, "trace-2.json") != NULL, "the report is the new trace's: %s",
		  r.out);
	struct stat now;
	cr_assert_eq(stat(isc_test_in_dir("trace.json"), &now), 0);
	cr_assert(now.st_ino == first.st_ino && now.st_size == first.st_size &&
			  now.st_mtim.tv_nsec == first.st_mtim.tv_nsec,
		  "the first run's trace is untouched");
	isc_run_free(&r);
}

static void preloaded(struct isc_run *r, const char *const *argv)
{
	cr_assert_eq(isc_test_run(argv, NULL, true, isc_test_dir(), r), 0);
	cr_assert_eq(exit_status(r), 0, "%s", r->err);
}

/* Without the launcher: the library names a second run's trace itself, and the analyzer,
 * given a trace whose descendants left theirs beside it, lists them with the command
 * that analyses them all. */
Test(launcher, traces_are_never_replaced_and_descendants_are_named)
{
	const char *prog[] = { isc_test_env("ISC_E2E_PROG"), "fork", "150", NULL };
	struct isc_run r;
	preloaded(&r, prog);
	cr_assert_null(strstr(r.err, "exists"), "%s", r.err);
	isc_run_free(&r);
	preloaded(&r, prog);
	cr_assert(strstr(r.err, "/trace.json exists: this run's trace is ") != NULL, "%s", r.err);
	isc_run_free(&r);
	cr_assert(isc_test_exists(isc_test_in_dir("trace.json")));
	cr_assert(isc_test_exists(isc_test_in_dir("trace-2.json")));
	const char *analyze[] = { isc_test_env("ISC_ANALYZE"), "trace-2.json", NULL };
	cr_assert_eq(isc_test_run(analyze, NULL, false, isc_test_dir(), &r), 0);
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	/* the second run's child wrote trace-2.PID.json; the first run's are not its own */
	cr_assert(strstr(r.err, "1 trace of descendant processes") != NULL, "%s", r.err);
	cr_assert(strstr(r.err, "\n  trace-2.") != NULL, "%s", r.err);
	cr_assert(strstr(r.err, "analyse them together with: inferscope-analyze trace-2.json ") !=
			  NULL,
		  "%s", r.err);
	cr_assert_null(strstr(r.err, "\n  trace."), "the first run's child is not listed: %s",
		       r.err);
	isc_run_free(&r);
	/* given them all, nothing is left to mention */
	const char *all[] = { "/bin/sh", "-c", "\"$0\" trace.json trace.[0-9]*.json",
			      isc_test_env("ISC_ANALYZE"), NULL };
	cr_assert_eq(isc_test_run(all, NULL, false, isc_test_dir(), &r), 0);
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	cr_assert_null(strstr(r.err, "descendant"), "%s", r.err);
	isc_run_free(&r);
}

/* A wrapper that execs the program (sh -c 'exec ...', env): the launcher and the
 * analyzer see one trace, whose identity is the program and whose report is about it. */
Test(launcher, a_wrapper_that_execs_is_part_of_the_program)
{
	struct isc_run r;
	LAUNCH(&r, "run", "-f", "json", "-r", "report.json", "--", "/bin/sh", "-c",
	       "exec /usr/bin/env \"$0\" work 120", "PROG");
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	yajl_val rep = isc_test_load_json(isc_test_in_dir("report.json"));
	cr_assert_not_null(rep);
	yajl_val in = isc_trace_get(rep, "inputs");
	cr_assert(YAJL_IS_ARRAY(in) && in->u.array.len == 1, "one trace for the chain");
	yajl_tree_free(rep);
	yajl_val t = isc_test_load_json(isc_test_in_dir("trace.json"));
	cr_assert_not_null(t);
	yajl_val cmd = isc_trace_get(t, "trace_metadata/command_line");
	cr_assert(YAJL_IS_ARRAY(cmd) && cmd->u.array.len == 3);
	cr_assert_str_eq(YAJL_GET_STRING(cmd->u.array.values[0]), isc_test_env("ISC_E2E_PROG"),
			 "the program is the trace's identity");
	yajl_val chain = isc_trace_get(t, "trace_metadata/exec_chain");
	cr_assert(YAJL_IS_ARRAY(chain) && chain->u.array.len == 2, "sh and env before it");
	cr_assert_geq(isc_trace_count(t, "cpu_call", "e2e_work"), 1);
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(launcher, environment_of_the_command)
{
	struct isc_run r;
	const char *env[] = { "LD_PRELOAD=libm.so.6", NULL };
	launch(&r,
	       (const char *const[]){ "run", "--no-report", "--max-memory", "64M", "-o", "x.json",
				      "--", "PROG", "env", "LD_PRELOAD", "INFERSCOPE_MAX_MEMORY",
				      "INFERSCOPE_OUTPUT", NULL },
	       env);
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	char want[8192], lib[4096];
	cr_assert_not_null(realpath(isc_test_env("ISC_PRELOAD"), lib));
	snprintf(want, sizeof(want),
		 "LD_PRELOAD=%s:libm.so.6\nINFERSCOPE_MAX_MEMORY=64M\n"
		 "INFERSCOPE_OUTPUT=%s\n",
		 lib, isc_test_in_dir("x.json"));
	cr_assert_str_eq(r.out, want, "the library's absolute path first, the user's kept");
	isc_run_free(&r);
}

static void usage_error(const char *const *args, const char *why)
{
	struct isc_run r;
	launch(&r, args, NULL);
	cr_assert_eq(exit_status(&r), 2, "%s", args[1]);
	cr_assert(strstr(r.err, why) != NULL, "stderr '%s' lacks '%s'", r.err, why);
	isc_run_free(&r);
}

#define USAGE(why, ...) usage_error((const char *const[]){ __VA_ARGS__, NULL }, why)

Test(launcher, bad_options_are_usage_errors)
{
	USAGE("'lots' is not a valid SIZE", "run", "--max-memory", "lots", "--", "PROG", "exit",
	      "0");
	USAGE("'soon' is not a valid DURATION", "run", "--delay", "soon", "--", "PROG", "exit",
	      "0");
	USAGE("'NOPE' is not a valid SIG", "run", "--snapshot-signal", "NOPE", "--", "PROG", "exit",
	      "0");
	USAGE("'pdf' is not md, json or html", "run", "-f", "pdf", "--", "PROG", "exit", "0");
	USAGE("unrecognized option '--bogus'", "run", "--bogus", "--", "PROG", "exit", "0");
	USAGE("no command given", "run", "--no-report");
	USAGE("unknown command 'frobnicate'", "frobnicate");
	const char *env[] = { "INFERSCOPE_LIBRARY=/nonexistent/libinferscope.so", NULL };
	struct isc_run r;
	launch(&r, (const char *const[]){ "run", "--", "PROG", "exit", "0", NULL }, env);
	cr_assert_eq(exit_status(&r), 2);
	cr_assert(strstr(r.err, "/nonexistent/libinferscope.so: not a readable file") != NULL, "%s",
		  r.err);
	isc_run_free(&r);
}

Test(launcher, a_command_that_cannot_run)
{
	struct isc_run r;
	LAUNCH(&r, "run", "--no-report", "--", "/nonexistent/command");
	cr_assert_eq(exit_status(&r), 127);
	cr_assert(strstr(r.err, "cannot run /nonexistent/command") != NULL, "%s", r.err);
	isc_run_free(&r);
	LAUNCH(&r, "run", "--no-report", "--", "no-such-command-on-path-e2e");
	cr_assert_eq(exit_status(&r), 127);
	isc_run_free(&r);
	FILE *f = fopen(isc_test_in_dir("script"), "w");
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	LAUNCH(&r, "run", "--no-report", "--", isc_test_in_dir("script"));
	cr_assert_eq(exit_status(&r), 126, "not executable");
	isc_run_free(&r);
}

Test(launcher, analyze_forwards)
{
	struct isc_run r;
	LAUNCH(&r, "run", "--no-report", "--", "PROG", "work", "120");
	isc_run_free(&r);
	LAUNCH(&r, "analyze", "--check", "scopes>=1", "-f", "gate-md", "trace.json");
	cr_assert_eq(exit_status(&r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "## InferScope gate: passed") != NULL, "%s", r.out);
	isc_run_free(&r);
	LAUNCH(&r, "analyze", "--check", "scopes>=100", "trace.json");
	cr_assert_eq(exit_status(&r), 1, "the analyzer's exit status is the launcher's");
	isc_run_free(&r);
	LAUNCH(&r, "--version");
	cr_assert_eq(exit_status(&r), 0);
	cr_assert(strncmp(r.out, "inferscope ", 11) == 0);
	isc_run_free(&r);
}

/* Every subcommand answers --help (and -h) on stdout with status 0, as the top level does. */
Test(launcher, every_subcommand_has_help)
{
	static const char *const cmds[] = { "run", "analyze", "capture", "watch" };
	static const char *const flags[] = { "--help", "-h" };
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		for (size_t k = 0; k < 2; k++) {
			struct isc_run r;
			LAUNCH(&r, cmds[i], flags[k]);
			cr_assert_eq(exit_status(&r), 0, "inferscope %s %s: %s", cmds[i], flags[k],
				     r.err);
			cr_assert(strstr(r.out, "usage") != NULL || strstr(r.out, "Usage") != NULL,
				  "inferscope %s %s: %s", cmds[i], flags[k], r.out);
			isc_run_free(&r);
		}
	}
}
