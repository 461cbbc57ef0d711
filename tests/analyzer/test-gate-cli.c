/* SPDX-License-Identifier: MIT */
/* The gate from the command line: every exit code, the outputs for CI, JUnit parsed back. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "analyzer/gate/gate.h"
#include "helpers.h"
#include "analyzer/report/report.h"

#define GPU "workloads/gpu-bound.json.gz"
#define CPU "workloads/cpu-preprocess.json.gz"

static char tmpdir[64];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/isc-gate-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

static const char *tmp(const char *name)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

/* The command, run in the data folder. */
static int analyze(const char *args, char **out, char **err)
{
	char cmd[8192];
	const char *exe = getenv("ISC_ANALYZE");
	cr_assert_not_null(exe, "ISC_ANALYZE is not set (run through meson test)");
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s", data_path(""), exe, args);
	return run(cmd, out, err);
}

static void usage_error(const char *args, const char *why)
{
	char *err = NULL;
	cr_assert_eq(analyze(args, NULL, &err), 2, "%s", args);
	cr_assert(strstr(err, why) != NULL, "%s: stderr '%s' lacks '%s'", args, err, why);
	free(err);
}

static void input_error(const char *args, const char *why)
{
	char *err = NULL;
	cr_assert_eq(analyze(args, NULL, &err), 3, "%s", args);
	cr_assert(strstr(err, why) != NULL, "%s: stderr '%s' lacks '%s'", args, err, why);
	free(err);
}

/* A baseline written by the command itself. */
static const char *baseline_of(const char *trace)
{
	const char *path = tmp("base.json");
	char args[512];
	snprintf(args, sizeof(args), "-f json -o '%s' %s", path, trace);
	cr_assert_eq(analyze(args, NULL, NULL), 0);
	return path;
}

TestSuite(gate_cli, .init = setup, .fini = teardown);

Test(gate_cli, exit_codes)
{
	cr_assert_eq(
		analyze("--check 'gpu_compute>=60' --check 'dropped_events==0' " GPU, NULL, NULL),
		0, "passing checks");
	cr_assert_eq(analyze("--check 'gpu_compute>=60' --check 'idle>=50' " GPU, NULL, NULL), 1,
		     "one failing check fails the gate");
	char args[512];
	snprintf(args, sizeof(args), "--baseline '%s' " GPU, baseline_of(GPU));
	cr_assert_eq(analyze(args, NULL, NULL), 0, "a run against its own baseline");
	snprintf(args, sizeof(args), "--baseline '%s' " CPU, baseline_of(GPU));
	cr_assert_eq(analyze(args, NULL, NULL), 1, "gpu-bound -> cpu-bound breaks the budgets");
	snprintf(args, sizeof(args), "--baseline '%s' --max-regression off " CPU, baseline_of(GPU));
	cr_assert_eq(analyze(args, NULL, NULL), 0, "no budget, the diff alone never fails");

	usage_error("--check 'gpu_compute>=60' --check nonsense " GPU, "expected NAME OP VALUE");
	usage_error("--check 'gpu=60' " GPU, "expected NAME OP VALUE");
	usage_error("--check 'gpu>=60' " GPU, "unknown name 'gpu'");
	usage_error("--check 'bottleneck>=gpu_bound' " GPU, "bottleneck takes == or !=");
	usage_error("--max-regression 5 " GPU, "--max-regression needs --baseline");
	usage_error("--baseline x.json --max-regression idle=lots " GPU, "'lots' is not");
	usage_error("--diff-threshold -3 --baseline x.json " GPU, "--diff-threshold");
	usage_error("--junit out.xml " GPU, "need --check or --baseline");
	usage_error("--gate-summary out.md " GPU, "need --check or --baseline");
	usage_error("-f junit " GPU, "need --check or --baseline");
	usage_error("--check nonsense /nonexistent/trace.json", "expected NAME OP VALUE");

	input_error("--check 'gpu_compute>=1' /nonexistent/trace.json",
		    "/nonexistent/trace.json: cannot open");
	input_error("--baseline /nonexistent/base.json " GPU, "baseline: /nonexistent/base.json");
	input_error("--baseline validate/bad/thread-id-string.json " GPU,
		    "baseline: validate/bad/thread-id-string.json");
	input_error("--baseline thresholds/example.conf " GPU, "thresholds/example.conf");
	input_error("--window-scope tokenize --baseline " GPU " " CPU,
		    "baseline: " GPU ": --window-scope: no scope named 'tokenize'");

	cr_assert_eq(
		analyze("--check 'idle>=50' --junit /nonexistent/dir/gate.xml " GPU, NULL, NULL), 4,
		"an unwritable output beats a failed gate");
	cr_assert_eq(analyze("--check 'idle<=50' --gate-summary /nonexistent/dir/gate.md " GPU,
			     NULL, NULL),
		     4);
}

/* The JUnit file as a CI system reads it: python3's ElementTree (junit-check.py). */
static yajl_val parse_junit(const char *path)
{
	char cmd[1024], *out = NULL, *err = NULL;
	snprintf(cmd, sizeof(cmd), "python3 '%s/tests/analyzer/junit-check.py' '%s'",
		 getenv("ISC_SRC"), path);
	int st = run(cmd, &out, &err);
	cr_assert_eq(st, 0, "junit-check: %s %s", out, err);
	char ebuf[256];
	yajl_val v = yajl_tree_parse(out, ebuf, sizeof(ebuf));
	cr_assert_not_null(v, "%s", ebuf);
	free(out);
	free(err);
	return v;
}

static const char *text_of(yajl_val v)
{
	const char *s = YAJL_GET_STRING(v);
	return s != NULL ? s : "";
}

static yajl_val at(yajl_val v, const char *k1, const char *k2)
{
	const char *path[3] = { k1, k2, NULL };
	return yajl_tree_get(v, path, yajl_t_any);
}

Test(gate_cli, junit_parses_back_with_the_right_counts)
{
	char args[1024];
	const char *xml = tmp("gate.xml");
	snprintf(args, sizeof(args),
		 "--baseline '%s' --check 'gpu_compute>=60' "
		 "--check 'bottleneck!=cpu_bound' --check 'kernel:*<&>\"*.count==0' "
		 "--check 'dropped_events==0' --junit '%s' " CPU,
		 baseline_of(GPU), xml);
	cr_assert_eq(analyze(args, NULL, NULL), 1);
	yajl_val v = parse_junit(xml);
	cr_assert_str_eq(YAJL_GET_STRING(at(v, "root", NULL)), "testsuites");
	cr_assert_eq(YAJL_GET_INTEGER(at(v, "suites", NULL)), 1, "one testsuite");
	cr_assert_eq(YAJL_GET_INTEGER(at(v, "tests", NULL)), 4 + ISC_CAT__COUNT,
		     "a testcase per check and per budget");
	cr_assert_eq(YAJL_GET_INTEGER(at(v, "failures", NULL)), 4,
		     "gpu_compute, bottleneck and two budgets fail");
	yajl_val cases = at(v, "cases", NULL);
	cr_assert(YAJL_IS_ARRAY(cases));
	yajl_val c0 = cases->u.array.values[0], c2 = cases->u.array.values[2];
	cr_assert_str_eq(YAJL_GET_STRING(at(c0, "name", NULL)), "gpu_compute>=60");
	cr_assert_str_eq(YAJL_GET_STRING(at(c0, "classname", NULL)), "inferscope.check");
	cr_assert(YAJL_IS_TRUE(at(c0, "failed", NULL)));
	cr_assert(strstr(text_of(at(c0, "message", NULL)), "expected >= 60 %") != NULL);
	cr_assert_str_eq(YAJL_GET_STRING(at(c2, "name", NULL)), "kernel:*<&>\"*.count==0",
			 "markup in names survives escaping");
	cr_assert(YAJL_IS_FALSE(at(c2, "failed", NULL)));
	yajl_val budget = cases->u.array.values[4 + 2];
	cr_assert_str_eq(YAJL_GET_STRING(at(budget, "classname", NULL)), "inferscope.budget");
	cr_assert_str_eq(YAJL_GET_STRING(at(budget, "name", NULL)), "gpu_compute");
	cr_assert(strstr(text_of(at(budget, "message", NULL)), "may fall by at most 5 pp"));
	cr_assert_str_eq(YAJL_GET_STRING(at(v, "properties", "baseline_bottleneck")), "gpu_bound");
	const char *so = YAJL_GET_STRING(at(v, "system_out", NULL));
	cr_assert(so != NULL && strstr(so, "removed kernels gemm_bf16_large") != NULL, "%s", so);
	yajl_tree_free(v);
}

Test(gate_cli, junit_carries_any_name_as_valid_xml)
{
	struct isc_snapshot cur = { .label = "trace\x01.json", .bottleneck = "gpu_bound" };
	struct isc_gate_item items[3] = {
		{ .kind = ISC_GATE_CHECK, .name = "caf\xc3\xa9 ok", .passed = true },
		{ .kind = ISC_GATE_CHECK,
		  .name = "bad\xff\xed\xa0\x80 byte",
		  .passed = false,
		  .detail = "tab\there & <there>" },
		{ .kind = ISC_GATE_BUDGET, .name = "idle", .passed = true },
	};
	struct isc_gate_result g = {
		.passed = false, .n_failed = 1, .items = items, .n = 3, .cur = &cur
	};
	struct isc_report_opts o = { .top = 10, .gate = &g };
	const char *path = tmp("any.xml");
	FILE *f = fopen(path, "w");
	cr_assert_eq(isc_report_junit(f, NULL, NULL, &o), 0);
	fclose(f);
	yajl_val v = parse_junit(path);
	yajl_val cases = at(v, "cases", NULL);
	cr_assert_str_eq(YAJL_GET_STRING(at(cases->u.array.values[0], "name", NULL)),
			 "caf\xc3\xa9 ok", "valid UTF-8 kept");
	cr_assert_str_eq(YAJL_GET_STRING(at(cases->u.array.values[1], "name", NULL)),
			 "bad???? byte", "each invalid byte (a surrogate too) replaced");
	cr_assert_str_eq(YAJL_GET_STRING(at(v, "properties", "trace")), "trace?.json");
	cr_assert_eq(YAJL_GET_INTEGER(at(v, "failures", NULL)), 1);
	yajl_tree_free(v);
	o.gate = NULL;
	cr_assert_lt(isc_report_junit(stdout, NULL, NULL, &o), 0, "no gate, nothing to write");
}

Test(gate_cli, markdown_summary_and_json)
{
	char args[1024], *out = NULL;
	const char *md = tmp("gate.md"), *json = tmp("result.json");
	snprintf(args, sizeof(args), "--baseline '%s' --check 'idle<=15' --gate-summary '%s' " CPU,
		 baseline_of(GPU), md);
	cr_assert_eq(analyze(args, &out, NULL), 1);
	cr_assert(strstr(out, "## Gate: FAILED") != NULL, "the report has the gate section");
	cr_assert(strstr(out, "## Gate: FAILED") < strstr(out, "## Verdict"), "gate first");
	free(out);
	char *summary = slurp(md, NULL);
	cr_assert_not_null(summary);
	cr_assert(strncmp(summary, "## InferScope gate: FAILED\n", 27) == 0, "%s", summary);
	cr_assert(strstr(summary, "**2 of 7 checks failed** on "
				  "`workloads/cpu-preprocess.json.gz`") != NULL);
	cr_assert(strstr(summary, "| pass | idle\\<=15 | 0.15 % | \\<= 15 % |") != NULL, "%s",
		  summary);
	cr_assert(strstr(summary, "| **FAIL** | gpu\\_compute vs baseline | 97.40 % -> 6.03 % "
				  "(-91.37 pp) | fall \\<= 5 pp |") != NULL,
		  "%s", summary);
	cr_assert(strstr(summary, "| removed | kernel | gemm\\_bf16\\_large | 120 -> 0 | "
				  "240.000 ms -> - |") != NULL);
	cr_assert(strstr(summary, "# InferScope report") == NULL, "the gate alone");
	free(summary);

	/* the JSON result holds the gate, and is still a baseline for the next run */
	snprintf(args, sizeof(args), "--baseline '%s' --check 'idle<=15' -f json -o '%s' " CPU,
		 baseline_of(GPU), json);
	cr_assert_eq(analyze(args, NULL, NULL), 1);
	char *text = slurp(json, NULL), ebuf[256];
	yajl_val v = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	cr_assert_not_null(v, "%s", ebuf);
	cr_assert(YAJL_IS_FALSE(at(v, "gate", "passed")));
	cr_assert_eq(YAJL_GET_INTEGER(at(v, "gate", "failed")), 2);
	yajl_val checks = at(v, "gate", "checks");
	cr_assert_eq(checks->u.array.len, 1 + ISC_CAT__COUNT);
	const char *inc[] = { "gate", "diff", "increased", NULL };
	cr_assert_eq(YAJL_GET_INTEGER(yajl_tree_get(v, inc, yajl_t_number)), 0);
	yajl_tree_free(v);
	free(text);
	snprintf(args, sizeof(args), "--baseline '%s' --max-regression 0 " CPU, json);
	cr_assert_eq(analyze(args, NULL, NULL), 0, "a result with a gate is a baseline too");
}

Test(gate_cli, a_trace_is_a_baseline_too)
{
	char *a = NULL, *b = NULL, args[512];
	snprintf(args, sizeof(args), "--baseline '%s' -f gate-md " CPU, baseline_of(GPU));
	cr_assert_eq(analyze(args, &a, NULL), 1);
	cr_assert_eq(analyze("--baseline " GPU " -f gate-md " CPU, &b, NULL), 1);
	/* the same numbers; only the baseline's name differs */
	char *ta = strstr(a, "\n\nVerdict"), *tb = strstr(b, "\n\nVerdict");
	cr_assert(ta != NULL && tb != NULL);
	cr_assert_str_eq(ta, tb);
	free(a);
	free(b);
}

/* --check reads the syscall table: the hooks' exact counts, not the calls that were slow
 * enough to become events (5 of the 1000 here). */
Test(gate_cli, syscall_checks_count_every_call)
{
	cr_assert_eq(analyze("--check 'syscall:read.count==1000' --check 'syscalls==1000' "
			     "--check 'syscall:read.p99_us<4' host/syscall-aggregates.json",
			     NULL, NULL),
		     0);
	cr_assert_eq(
		analyze("--check 'syscall:read.count<=5' host/syscall-aggregates.json", NULL, NULL),
		1);
}
