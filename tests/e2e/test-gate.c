/* SPDX-License-Identifier: MIT */
/*
 * The gate's bundled example end to end: the example server profiled twice under the
 * launcher (pinned buffers, then the pull request's pageable ones) fails the gate on the
 * regression and passes against a second run of itself; the recorded pair of traces in
 * data/ gives the golden summary and JUnit file (tests/e2e/regen.sh regenerates them).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

TestSuite(gate_example, .init = isc_test_dir_setup, .fini = isc_test_dir_teardown, .timeout = 120);

static int status_of(const char *const *argv, const char *cwd, struct isc_run *r)
{
	cr_assert_eq(isc_test_run(argv, NULL, false, cwd, r), 0);
	cr_assert(WIFEXITED(r->status), "%s: status %#x", argv[0], r->status);
	return WEXITSTATUS(r->status);
}

static char *text_of(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	char *text = NULL;
	size_t cap = 0;
	cr_assert_geq(getdelim(&text, &cap, '\0', f), 0);
	fclose(f);
	return text;
}

Test(gate_example, recorded_pair_matches_golden)
{
	char data[4096], golden[4096];
	snprintf(data, sizeof(data), "%s/tests/e2e/data", isc_test_env("ISC_SRC"));
	snprintf(golden, sizeof(golden), "%s/tests/e2e/golden", isc_test_env("ISC_SRC"));
	struct isc_run r;
	const char *argv[] = { isc_test_env("ISC_ANALYZE"),
			       "--baseline",
			       "serve-main.json.gz",
			       "--check",
			       "bottleneck==gpu_bound",
			       "--check",
			       "dropped_events==0",
			       "--gate-summary",
			       isc_test_in_dir("gate.md"),
			       "--junit",
			       isc_test_in_dir("gate.xml"),
			       "-f",
			       "json",
			       "-o",
			       isc_test_in_dir("analysis.json"),
			       "serve-pageable.json.gz",
			       NULL };
	cr_assert_eq(status_of(argv, data, &r), 1, "the regression fails the gate: %s", r.err);
	isc_run_free(&r);
	static const char *const files[] = { "gate.md", "gate.xml" };
	static const char *const gold[] = { "gate-summary.md", "gate-junit.xml" };
	for (int i = 0; i < 2; i++) {
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", golden, gold[i]);
		char *want = text_of(path), *got = text_of(isc_test_in_dir(files[i]));
		cr_assert_str_eq(got, want,
				 "%s differs from its golden (tests/e2e/regen.sh "
				 "regenerates after a deliberate change)",
				 gold[i]);
		free(want);
		free(got);
	}
}

/* The gate's JSON: whether the named budget passed. */
static bool budget_passed(yajl_val result, const char *category)
{
	yajl_val checks = isc_trace_get(result, "gate/checks");
	cr_assert(YAJL_IS_ARRAY(checks));
	for (size_t i = 0; i < checks->u.array.len; i++) {
		yajl_val c = checks->u.array.values[i];
		if (strcmp(isc_trace_str(c, "kind"), "budget") == 0 &&
		    strcmp(isc_trace_str(c, "name"), category) == 0) {
			return YAJL_IS_TRUE(isc_trace_get(c, "passed"));
		}
	}
	cr_assert_fail("no budget for %s", category);
	return false;
}

static void profile(const char *trace, const char *mode)
{
	struct isc_run r;
	const char *argv[] = {
		isc_test_env("ISC_LAUNCHER"), "run", "--no-report", "-o", trace, "--",
		isc_test_env("ISC_EXAMPLE"),  mode,  NULL
	};
	cr_assert_eq(status_of(argv, isc_test_dir(), &r), 0, "%s", r.err);
	cr_assert(strstr(r.out, "gpu=ok") != NULL, "%s", r.out);
	isc_run_free(&r);
}

static int gate(const char *baseline, const char *trace, const char *result, const char *pp)
{
	struct isc_run r;
	const char *argv[] = { isc_test_env("ISC_LAUNCHER"),
			       "analyze",
			       "--baseline",
			       baseline,
			       "--max-regression",
			       pp,
			       "--junit",
			       "gate.xml",
			       "-f",
			       "json",
			       "-o",
			       result,
			       trace,
			       NULL };
	int st = status_of(argv, isc_test_dir(), &r);
	isc_run_free(&r);
	return st;
}

/* What a CI job does: the main branch's run is the baseline, the pull request's is gated. */
Test(gate_example, live_regression_fails_and_rerun_passes)
{
	if (getenv("ISC_EXAMPLE") == NULL) {
		cr_skip_test("the example needs the simulated GPU (CUDA headers)");
	}
	profile("main.json", "");
	profile("rerun.json", "");
	profile("pr.json", "--pageable");
	struct isc_run r;
	const char *argv[] = { isc_test_env("ISC_LAUNCHER"), "analyze",	  "-f", "json", "-o",
			       "main-analysis.json",	     "main.json", NULL };
	cr_assert_eq(status_of(argv, isc_test_dir(), &r), 0);
	isc_run_free(&r);

	/* The host-side shares of two runs of the same code move by a few points with the
	 * machine's load (startup, scheduling); the GPU side by a fraction of one. A budget
	 * of 10 points keeps this check about false alarms, not about a busy CI machine. */
	cr_assert_eq(gate("main-analysis.json", "rerun.json", "rerun-analysis.json", "10"), 0,
		     "a second run of the same code passes");
	cr_assert_eq(gate("main-analysis.json", "pr.json", "pr-analysis.json", "10"), 1);
	yajl_val res = isc_test_load_json(isc_test_in_dir("pr-analysis.json"));
	cr_assert_not_null(res);
	cr_assert(!budget_passed(res, "gpu_compute"), "the GPU computes less of the time");
	cr_assert(!budget_passed(res, "h2d_copy"), "the uploads take more of it");
	cr_assert(budget_passed(res, "idle"));
	yajl_val ops = isc_trace_get(res, "gate/diff/ops");
	bool pageable_added = false;
	for (size_t i = 0; YAJL_IS_ARRAY(ops) && i < ops->u.array.len; i++) {
		yajl_val op = ops->u.array.values[i];
		pageable_added |=
			strcmp(isc_trace_str(op, "change"), "added") == 0 &&
			strcmp(isc_trace_str(op, "name"), "Memcpy HtoD (Pageable -> Device)") == 0;
	}
	cr_assert(pageable_added, "the op diff shows the pageable uploads");
	yajl_tree_free(res);
	char *xml = text_of(isc_test_in_dir("gate.xml"));
	cr_assert(strstr(xml, "<testcase classname=\"inferscope.budget\" name=\"gpu_compute\" "
			      "time=\"0\">\n      <failure") != NULL,
		  "%s", xml);
	free(xml);
}
