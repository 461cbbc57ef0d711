/* SPDX-License-Identifier: MIT */
/*
 * The acceptance of the analyzer: every scenario workload of tests/workloads/, run under
 * the preload on the simulated GPU, gets the verdict and top suggestion its README names.
 * While the preload records no GPU activity (its CUDA layers not built yet), a trace has
 * nothing to judge the GPU by and the test says so and skips.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "analyzer/readers/reader.h"

struct expect {
	const char *workload;
	const char *verdict;
	const char *top[2]; /* either is right */
	const char *loaded; /* verdict also right when other jobs load the machine */
};

static const struct expect table[] = {
	{ "cpu-preprocess", "cpu_bound", { "host.cpu-preprocessing", NULL } },
	{ "gpu-bound", "gpu_bound", { "gpu.dominant-kernels", "gpu.low-occupancy" } },
	{ "copy-pageable", "memory_bound", { "copy.pageable", NULL } },
	{ "launch-bound", "cpu_bound", { "launch.tiny-kernels", NULL } },
	/* 50 us kernels, each followed by cudaDeviceSynchronize: on a loaded machine the
	 * host comes back from every synchronisation late, that time is framework
	 * overhead with the GPU idle, and the balance tips to cpu_bound. */
	{ "sync-every-kernel", "balanced", { "sync.excessive", NULL }, "cpu_bound" },
	{ "alloc-churn", "cpu_bound", { "alloc.device-steady-state", NULL } },
	{ "io-wait", "cpu_bound", { "host.io-wait", NULL } },
	{ "balanced", "balanced", { "pipeline.overlapped", NULL } },
};

/* Runs the workload under the preload in dir. Its traces: trace.json for the process
 * started (here `timeout`), trace.PID.json for descendants, merged by the reader. */
static void run_workload(const char *workload, char *dir)
{
	const char *bin = getenv("ISC_WORKLOADS"), *preload = getenv("ISC_PRELOAD");
	cr_assert(bin != NULL && preload != NULL);
	cr_assert_not_null(mkdtemp(dir));
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && INFERSCOPE_OUTPUT=trace.json LD_PRELOAD=%s "
		 "timeout 120 %s/wl-%s",
		 dir, preload, bin, workload);
	cr_assert_eq(run(cmd, NULL, NULL), 0, "%s did not run", workload);
}

static struct isc_trace *load_dir(const char *workload, const char *dir)
{
	glob_t g;
	char pattern[4200];
	snprintf(pattern, sizeof(pattern), "%s/trace*.json", dir);
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "%s wrote no trace", workload);
	struct isc_trace *t = isc_trace_create();
	for (size_t k = 0; k < g.gl_pathc; k++) {
		struct isc_diag d;
		cr_assert_eq(isc_read_file(t, g.gl_pathv[k], NULL, &d), 0, "%s: %s", workload,
			     d.msg);
	}
	globfree(&g);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

Test(workloads, verdict_and_top_suggestion, .timeout = 600)
{
	int judged = 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		bool keep = false;
		char dir[] = "/tmp/isc-wl-XXXXXX";
		run_workload(table[i].workload, dir);
		struct isc_trace *t = load_dir(table[i].workload, dir);
		struct isc_analysis *a = analyse(t, NULL);
		if (a->gpu_timeline) {
			const char *v = isc_bound_name(a->verdict.type);
			bool right = strcmp(v, table[i].verdict) == 0 ||
				     (table[i].loaded && strcmp(v, table[i].loaded) == 0);
			cr_expect(right,
				  "%s: verdict %s (%s); window %.3f ms, GPU busy %.3f ms, "
				  "%llu events, trace kept in %s",
				  table[i].workload, v, a->verdict.cause,
				  (a->window.end - a->window.start) / 1e6, a->gpu_busy_ns / 1e6,
				  (unsigned long long)a->events_total, dir);
			keep = keep || !right;
			cr_expect_gt(a->n_sugg, 0, "%s", table[i].workload);
			if (a->n_sugg > 0) {
				const char *got = a->sugg[0].rule_id;
				bool ok = strcmp(got, table[i].top[0]) == 0 ||
					  (table[i].top[1] && strcmp(got, table[i].top[1]) == 0);
				cr_expect(ok, "%s: top suggestion %s", table[i].workload, got);
			}
			judged++;
		}
		isc_analysis_destroy(a);
		isc_trace_destroy(t);
		if (!keep) {
			char cmd[256];
			snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
			run(cmd, NULL, NULL);
		}
	}
	if (judged == 0) {
		cr_skip_test("the preload recorded no GPU activity for any workload (its CUDA "
			     "hooks and CUPTI layer are not on this build): nothing to judge yet");
	}
}

/* A process killed with SIGKILL leaves its spill file; the analyzer reads it. */
Test(workloads, spill_of_a_killed_process, .timeout = 120)
{
	const char *bin = getenv("ISC_WORKLOADS"), *preload = getenv("ISC_PRELOAD");
	cr_assert(bin != NULL && preload != NULL);
	char dir[] = "/tmp/isc-spill-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char cmd[4096], *out = NULL;
	snprintf(cmd, sizeof(cmd),
		 "cd %s && (INFERSCOPE_OUTPUT=trace.json LD_PRELOAD=%s "
		 "%s/wl-sync-every-kernel & p=$!; sleep 0.4; kill -9 $p; wait $p; "
		 "ls *.spill)",
		 dir, preload, bin);
	run(cmd, &out, NULL);
	char spill[256] = "";
	if (sscanf(out, "%255s", spill) != 1 || strstr(spill, ".spill") == NULL) {
		free(out);
		cr_skip_test("the killed workload left no spill file");
	}
	free(out);
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", dir, spill);
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d;
	cr_assert_eq(isc_read_file(t, path, NULL, &d), 0, "%s", d.msg);
	cr_assert_str_eq(t->inputs[0].format, "spill");
	cr_assert_eq(t->inputs[0].complete, 0, "a recovered trace is incomplete");
	cr_assert_str_eq(isc_trace_str(t, t->inputs[0].end_reason), "recovered");
	cr_assert_gt(t->n, 0);
	cr_assert_eq(isc_trace_finalize(t), 0);
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert(a->incomplete);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd, NULL, NULL);
}
