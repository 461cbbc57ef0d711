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

/* Ops a gate result's diff lists with this change ("added", "removed"), or with this
 * name when name is not NULL. */
static size_t diff_ops(yajl_val res, const char *change, const char *name)
{
	yajl_val ops = isc_trace_get(res, "gate/diff/ops");
	size_t n = 0;
	for (size_t i = 0; YAJL_IS_ARRAY(ops) && i < ops->u.array.len; i++) {
		yajl_val op = ops->u.array.values[i];
		n += strcmp(isc_trace_str(op, "change"), change) == 0 &&
		     (name == NULL || strcmp(isc_trace_str(op, "name"), name) == 0);
	}
	return n;
}

/*
 * What a CI job does: the main branch's run is the baseline, the pull request's is
 * gated. Live runs on a loaded machine move the shares of the window by more than any
 * budget (the host slows, the simulated device does not), so which budgets pass is
 * asserted on the recorded pair above (deterministic); here what does not depend on
 * the machine's speed: the gate runs and judges (exit 0 or 1, never a usage or input
 * error), the op diff of a rerun of the same code adds and removes nothing, and the
 * pull request's adds the pageable uploads, with the budgets in the JUnit file.
 */
Test(gate_example, live_regression_shows_in_the_op_diff)
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

	int st = gate("main-analysis.json", "rerun.json", "rerun-analysis.json", "10");
	cr_assert(st == 0 || st == 1, "the gate judged the rerun (exit %d)", st);
	yajl_val res = isc_test_load_json(isc_test_in_dir("rerun-analysis.json"));
	cr_assert_not_null(res);
	cr_assert_eq(diff_ops(res, "added", NULL), 0, "a rerun of the same code adds no op");
	cr_assert_eq(diff_ops(res, "removed", NULL), 0, "and removes none");
	yajl_tree_free(res);

	st = gate("main-analysis.json", "pr.json", "pr-analysis.json", "10");
	cr_assert(st == 0 || st == 1, "the gate judged the pull request (exit %d)", st);
	res = isc_test_load_json(isc_test_in_dir("pr-analysis.json"));
	cr_assert_not_null(res);
	cr_assert_eq(diff_ops(res, "added", "Memcpy HtoD (Pageable -> Device)"), 1,
		     "the op diff shows the pageable uploads");
	yajl_tree_free(res);
	char *xml = text_of(isc_test_in_dir("gate.xml"));
	cr_assert(strstr(xml, "<testcase classname=\"inferscope.budget\" name=\"gpu_compute\"") !=
			  NULL,
		  "%s", xml);
	free(xml);
}
