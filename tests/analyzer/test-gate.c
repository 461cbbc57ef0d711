/* SPDX-License-Identifier: MIT */
/* The gate's modules: expressions, budgets, the op diff, baselines (docs/ci.md). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/gate/gate.h"
#include "helpers.h"
#include "analyzer/report/report.h"

/* A snapshot with known numbers, built by hand. */
static struct isc_snapshot *fake(void)
{
	struct isc_snapshot *s = calloc(1, sizeof(*s));
	s->label = strdup("fake.json");
	double pct[ISC_CAT__COUNT] = {
		[ISC_CAT_CPU] = 10, [ISC_CAT_H2D] = 5,	 [ISC_CAT_GPU] = 60,
		[ISC_CAT_D2H] = 5,  [ISC_CAT_IDLE] = 15, [ISC_CAT_FRAMEWORK] = 5
	};
	memcpy(s->pct, pct, sizeof(pct));
	s->gpu_busy_pct = 70;
	s->window_us = 50000;
	snprintf(s->bottleneck, sizeof(s->bottleneck), "gpu_bound");
	s->confidence = 0.85;
	s->events = 1000;
	s->dropped = 0;
	s->skipped = 3;
	s->cupti_dropped = 2;
	struct isc_snap_group *k = &s->g[ISC_SG_KERNEL];
	k->ops = calloc(3, sizeof(*k->ops));
	const char *names[3] = { "gemm_a", "gemm_b", "void add<float, 3>(float*, int=0)" };
	for (int i = 0; i < 3; i++) {
		k->ops[i].name = strdup(names[i]);
		k->ops[i].count = (uint64_t)(10 * (i + 1));
		k->ops[i].total_us = 1000.0 * (i + 1);
		k->ops[i].mean_us = 100;
		k->ops[i].min_us = 50.0 + i;
		k->ops[i].max_us = 200.0 + i;
		k->ops[i].pct_us[7] = 150.0 + i;
	}
	k->n = 3;
	k->events = 60;
	s->g[ISC_SG_SYSCALL].events = 7;
	s->rules = calloc(1, sizeof(*s->rules));
	s->rules[0] = strdup("copy.pageable");
	s->n_rules = 1;
	return s;
}

/* Parses and evaluates; fails the test when the expression does not parse. */
static bool holds(const struct isc_snapshot *s, const char *expr, char *value)
{
	struct isc_check c;
	char err[512] = "";
	cr_assert_eq(isc_check_parse(expr, &c, err, sizeof(err)), 0, "%s: %s", expr, err);
	bool passed = false;
	char v[64];
	isc_check_eval(&c, s, &passed, value ? value : v, 64);
	isc_check_finish(&c);
	return passed;
}

static void rejected(const char *expr, const char *why)
{
	struct isc_check c;
	char err[512] = "";
	cr_assert_eq(isc_check_parse(expr, &c, err, sizeof(err)), -EINVAL, "%s parsed", expr);
	cr_assert(strstr(err, why) != NULL, "%s: message '%s' lacks '%s'", expr, err, why);
}

Test(gate, every_form_of_expression)
{
	struct isc_snapshot *s = fake();
	char v[64];
	/* categories, in percent, '%' allowed, blanks around the parts */
	cr_assert(holds(s, "gpu_compute>=60", v));
	cr_assert_str_eq(v, "60.00 %");
	cr_assert(!holds(s, "gpu_compute>60", NULL));
	cr_assert(holds(s, " idle <= 15% ", NULL));
	cr_assert(!holds(s, "idle<15", NULL));
	cr_assert(holds(s, "cpu_preprocessing==10", NULL));
	cr_assert(holds(s, "h2d_copy!=6", NULL));
	cr_assert(holds(s, "d2h_copy<5.01", NULL));
	cr_assert(holds(s, "framework_overhead>4.99", NULL));
	cr_assert(holds(s, "gpu_busy>=70", NULL));
	/* the verdict and the numbers */
	cr_assert(holds(s, "bottleneck==gpu_bound", v));
	cr_assert_str_eq(v, "gpu_bound");
	cr_assert(holds(s, "bottleneck!=cpu_bound", NULL));
	cr_assert(!holds(s, "bottleneck==cpu_bound", NULL));
	cr_assert(holds(s, "confidence>=0.85", NULL));
	cr_assert(holds(s, "end_to_end_latency_ms==50", NULL));
	cr_assert(holds(s, "end_to_end_latency_us<=50000", NULL));
	cr_assert(holds(s, "dropped_events==0", NULL));
	cr_assert(holds(s, "events==1000", NULL));
	cr_assert(holds(s, "skipped_events==3", NULL));
	cr_assert(holds(s, "cupti_dropped_records==2", NULL));
	cr_assert(holds(s, "kernels==60", NULL));
	cr_assert(holds(s, "syscalls==7", NULL));
	cr_assert(holds(s, "cuda_api_calls==0", NULL));
	cr_assert(holds(s, "suggestions==1", NULL));
	cr_assert(holds(s, "rule:copy.pageable==1", NULL));
	cr_assert(holds(s, "rule:copy.sync==0", NULL));
	/* per-name statistics: patterns sum counts and totals, take the worst of the rest */
	cr_assert(holds(s, "kernel:gemm*.count==30", NULL));
	cr_assert(holds(s, "kernel:gemm*.total_ms==3", v));
	cr_assert_str_eq(v, "3.000 ms");
	cr_assert(holds(s, "kernel:gemm_b.total_us==2000", NULL));
	cr_assert(holds(s, "kernel:gemm*.mean_us==100", NULL));
	cr_assert(holds(s, "kernel:gemm*.max_us==201", NULL));
	cr_assert(holds(s, "kernel:gemm*.min_us==50", NULL));
	cr_assert(holds(s, "kernel:*.p99_us==152", NULL));
	/* a template name holding < > and = : the operator is the rightmost one */
	cr_assert(holds(s, "kernel:void add<float, 3>(float*, int=0).count>=30", NULL));
	cr_assert(holds(s, "kernel:*<float*.total_ms<=3", NULL));
	/* no match: zero counts and totals, no value for the rest */
	cr_assert(holds(s, "kernel:nothing*.count==0", NULL));
	cr_assert(holds(s, "scope:nothing.total_ms<=0", NULL));
	cr_assert(!holds(s, "kernel:nothing.max_us<=1000", v));
	cr_assert_str_eq(v, "no match");
	isc_snapshot_destroy(s);
}

Test(gate, malformed_expressions_are_refused_with_a_reason)
{
	rejected("gpu_compute", "expected NAME OP VALUE");
	rejected("gpu_compute=60", "expected NAME OP VALUE");
	rejected("gpu_compute=>60", "expected NAME OP VALUE");
	rejected("idle<==5", "expected NAME OP VALUE");
	rejected(">=60", "the name is missing");
	rejected("idle<=", "the value is missing");
	rejected("gpu_computer>=60", "unknown name 'gpu_computer'");
	rejected("idle<=lots", "'lots' is not a number");
	rejected("idle<=1e999", "is not a number");
	rejected("kernels>=5%", "is not a number");
	rejected("bottleneck>=cpu_bound", "bottleneck takes == or !=");
	rejected("bottleneck==slow", "'slow' is not cpu_bound");
	rejected("rule:no.such==0", "unknown rule 'no.such'");
	rejected("kernel:gemm.total<=5", "expected kernel:NAME.STAT");
	rejected("kernel:gemm<=5", "expected kernel:NAME.STAT");
	rejected("kernel:.count<=5", "expected kernel:NAME.STAT");
	rejected("kernel:gemm.p42_us<=5", "expected kernel:NAME.STAT");
	rejected("widget:gemm.count<=5", "unknown prefix");
}

Test(gate, globs)
{
	cr_assert(isc_glob_match("gemm*", "gemm_bf16"));
	cr_assert(isc_glob_match("*", ""));
	cr_assert(isc_glob_match("*attn*fwd", "flash_attn_v2_fwd"));
	cr_assert(!isc_glob_match("*attn*fwd", "flash_attn_v2_bwd"));
	cr_assert(isc_glob_match("a[1]", "a[1]"), "only '*' is special");
	cr_assert(!isc_glob_match("gemm", "gemm_bf16"));
}

static const struct isc_gate_item *item(const struct isc_gate_result *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->items[i].name, name) == 0) {
			return &r->items[i];
		}
	}
	cr_assert_fail("no item %s", name);
	return NULL;
}

static struct isc_gate_result *gate(struct isc_gate_spec *spec, const struct isc_snapshot *base,
				    const struct isc_snapshot *cur, const char *const *budgets)
{
	char err[512];
	for (size_t i = 0; budgets[i] != NULL; i++) {
		cr_assert_eq(isc_gate_add_budget(spec, budgets[i], err, sizeof(err)), 0, "%s: %s",
			     budgets[i], err);
	}
	struct isc_gate_result *r = NULL;
	cr_assert_eq(isc_gate_run(spec, cur, base, &r), 0);
	return r;
}

Test(gate, budgets_look_in_the_bad_direction)
{
	struct isc_snapshot *base = fake(), *cur = fake();
	cur->pct[ISC_CAT_GPU] = 54;  /* fell 6 pp */
	cur->pct[ISC_CAT_IDLE] = 20; /* rose 5 pp: at the budget, passes */
	cur->pct[ISC_CAT_CPU] = 4;   /* fell 6 pp: an improvement */
	cur->pct[ISC_CAT_H2D] = 11;  /* rose 6 pp */
	struct isc_gate_spec spec;
	isc_gate_spec_init(&spec);
	struct isc_gate_result *r = gate(&spec, base, cur, (const char *const[]){ NULL });
	cr_assert_eq(r->n, ISC_CAT__COUNT, "the default budget covers every category");
	cr_assert(!item(r, "gpu_compute")->passed);
	cr_assert_str_eq(item(r, "gpu_compute")->value, "-6.00 pp");
	cr_assert(strstr(item(r, "gpu_compute")->detail, "may fall by at most 5 pp") != NULL);
	cr_assert(item(r, "idle")->passed, "exactly at the budget passes");
	cr_assert(item(r, "cpu_preprocessing")->passed, "a fall of host work is no regression");
	cr_assert(!item(r, "h2d_copy")->passed);
	cr_assert_eq(r->n_failed, 2);
	cr_assert(!r->passed);
	isc_gate_result_destroy(r);

	/* per category, signed, off; the default for the others */
	isc_gate_spec_init(&spec);
	r = gate(&spec, base, cur,
		 (const char *const[]){ "7", "gpu_compute=-6", "idle=+4.5", "cpu_preprocessing=-5",
					"h2d_copy=off", NULL });
	cr_assert_eq(r->n, ISC_CAT__COUNT - 1);
	cr_assert(item(r, "gpu_compute")->passed);
	cr_assert(!item(r, "idle")->passed);
	cr_assert(!item(r, "cpu_preprocessing")->passed, "a signed budget limits that direction");
	cr_assert(item(r, "d2h_copy")->passed);
	cr_assert_eq(item(r, "d2h_copy")->budget.pp, 7);
	isc_gate_result_destroy(r);

	/* off by default, one category named */
	isc_gate_spec_init(&spec);
	r = gate(&spec, base, cur, (const char *const[]){ "off", "gpu_compute=10", NULL });
	cr_assert_eq(r->n, 1);
	cr_assert(r->passed);
	isc_gate_result_destroy(r);
	isc_snapshot_destroy(base);
	isc_snapshot_destroy(cur);
}

Test(gate, budget_arguments)
{
	struct isc_gate_spec spec;
	char err[512];
	isc_gate_spec_init(&spec);
	const char *bad[] = { "-5",	  "five",  "idle=", "idle=5pp",
			      "idle=--5", "gpu=5", "=5",    "idle=on" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(isc_gate_add_budget(&spec, bad[i], err, sizeof(err)), -EINVAL, "%s",
			     bad[i]);
		cr_assert(strstr(err, "--max-regression") != NULL, "%s: %s", bad[i], err);
	}
	cr_assert(strstr(err, "not [+|-]PP or off") != NULL, "%s", err);
	cr_assert_eq(isc_gate_add_budget(&spec, "0", err, sizeof(err)), 0);
	cr_assert_eq(isc_gate_add_budget(&spec, "framework_overhead=+0.5", err, sizeof(err)), 0);
	cr_assert_eq(spec.cat[ISC_CAT_FRAMEWORK].dir, 1);
	cr_assert_eq(isc_category_bad_dir(ISC_CAT_GPU), -1);
	cr_assert_eq(isc_category_bad_dir(ISC_CAT_IDLE), 1);
}

Test(gate, checks_are_anded_and_all_listed)
{
	struct isc_snapshot *s = fake();
	struct isc_gate_spec spec;
	char err[512];
	isc_gate_spec_init(&spec);
	const char *checks[] = { "gpu_compute>=50", "idle<=10", "bottleneck==gpu_bound",
				 "kernel:none.max_us<=1" };
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(isc_gate_add_check(&spec, checks[i], err, sizeof(err)), 0);
	}
	cr_assert_eq(isc_gate_add_check(&spec, "nonsense", err, sizeof(err)), -EINVAL);
	cr_assert_eq(spec.n_checks, 4, "a refused check is not added");
	cr_assert(isc_gate_active(&spec));
	struct isc_gate_result *r = NULL;
	cr_assert_eq(isc_gate_run(&spec, s, NULL, &r), 0);
	cr_assert_eq(r->n, 4, "no baseline, no budgets");
	cr_assert(!r->has_diff);
	cr_assert_eq(r->n_failed, 2);
	cr_assert(r->items[0].passed && !r->items[1].passed && r->items[2].passed);
	cr_assert_str_eq(r->items[1].detail, "idle is 15.00 %, expected <= 10 %");
	cr_assert_str_eq(r->items[3].detail, "nothing in kernels matches 'none' in this run");
	isc_gate_result_destroy(r);
	isc_gate_spec_finish(&spec);
	isc_snapshot_destroy(s);
}

static struct isc_snapshot *snap_of(const char *rel, const char *window_scope)
{
	struct isc_trace *t = load(rel);
	struct isc_analyze_opts o = { .window_scope = window_scope };
	struct isc_analysis *a = analyse(t, &o);
	struct isc_snapshot *s = NULL;
	cr_assert_eq(isc_snapshot_from_analysis(t, a, rel, &s), 0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	return s;
}

static size_t host_side(const struct isc_diff *d, enum isc_diff_change c)
{
	return d->by_group[ISC_SG_SCOPE][c] + d->by_group[ISC_SG_CPU_OP][c] +
	       d->by_group[ISC_SG_CUDA_API][c];
}

static bool has_row(const struct isc_diff *d, enum isc_diff_change c, int group, const char *prefix)
{
	for (size_t i = 0; i < d->n; i++) {
		if (d->rows[i].change == c && d->rows[i].group == group &&
		    strncmp(d->rows[i].name, prefix, strlen(prefix)) == 0) {
			return true;
		}
	}
	return false;
}

/* HTA's trace diff on its own fixtures (tests/analyzer/data/kineto/README.md): iteration
 * 1010, CPU ops 5 unchanged, 3 added, 1 removed; GPU ops 1 removed. */
Test(gate, op_diff_reproduces_hta)
{
	struct isc_snapshot *base = snap_of("kineto/compare_base.json.gz", "ProfilerStep#1010");
	struct isc_snapshot *cur = snap_of("kineto/compare_test.json.gz", "ProfilerStep#1010");
	struct isc_diff d;
	cr_assert_eq(isc_diff_compute(base, cur, 10, &d), 0);
	cr_assert_eq(host_side(&d, ISC_DIFF_UNCHANGED), 5);
	cr_assert_eq(host_side(&d, ISC_DIFF_ADDED), 3);
	cr_assert_eq(host_side(&d, ISC_DIFF_REMOVED), 1);
	cr_assert_eq(host_side(&d, ISC_DIFF_INCREASED) + host_side(&d, ISC_DIFF_DECREASED), 0);
	cr_assert(has_row(&d, ISC_DIFF_ADDED, ISC_SG_CPU_OP, "AddmmBackward0"));
	cr_assert(has_row(&d, ISC_DIFF_ADDED, ISC_SG_CPU_OP, "All2All_Pooled_Req"));
	cr_assert(has_row(&d, ISC_DIFF_ADDED, ISC_SG_CPU_OP, "CatBackward0"));
	cr_assert(has_row(&d, ISC_DIFF_REMOVED, ISC_SG_SCOPE, "nccl:all_reduce"));
	cr_assert(has_row(&d, ISC_DIFF_UNCHANGED, ISC_SG_SCOPE, "ProfilerStep#1010"));
	cr_assert(has_row(&d, ISC_DIFF_UNCHANGED, ISC_SG_CUDA_API, "cudaLaunchKernel"));
	cr_assert_eq(d.by_group[ISC_SG_KERNEL][ISC_DIFF_REMOVED], 1);
	cr_assert(has_row(&d, ISC_DIFF_REMOVED, ISC_SG_KERNEL,
			  "void at::native::vectorized_elementwise_kernel<4, "
			  "at::native::CUDAFunctor_add<int>"));
	cr_assert_eq(d.by_group[ISC_SG_KERNEL][ISC_DIFF_ADDED] +
			     d.by_group[ISC_SG_GPU_COPY][ISC_DIFF_ADDED],
		     0);
	/* the added op's time, as HTA lists it */
	cr_assert_eq(d.rows[0].change, ISC_DIFF_ADDED);
	cr_assert_str_eq(d.rows[0].name, "All2All_Pooled_Req", "biggest change first");
	cr_assert_float_eq(d.rows[0].total_us, 311.0, 1e-9);
	isc_diff_finish(&d);
	isc_snapshot_destroy(base);
	isc_snapshot_destroy(cur);
}

Test(gate, op_diff_time_threshold_then_counts)
{
	struct isc_snapshot *base = fake(), *cur = fake();
	struct isc_snap_group *k = &cur->g[ISC_SG_KERNEL];
	k->ops[0].total_us = 1150; /* +15 %: increased */
	k->ops[1].total_us = 1900; /* -5 %, same count: unchanged */
	k->ops[2].count = 29;	   /* time within 10 %, one fewer: decreased */
	k->ops[2].total_us = 2990;
	struct isc_diff d;
	cr_assert_eq(isc_diff_compute(base, cur, 10, &d), 0);
	cr_assert(has_row(&d, ISC_DIFF_INCREASED, ISC_SG_KERNEL, "gemm_a"));
	cr_assert(has_row(&d, ISC_DIFF_UNCHANGED, ISC_SG_KERNEL, "gemm_b"));
	cr_assert(has_row(&d, ISC_DIFF_DECREASED, ISC_SG_KERNEL, "void add"));
	isc_diff_finish(&d);
	cr_assert_eq(isc_diff_compute(base, cur, 2, &d), 0);
	cr_assert(has_row(&d, ISC_DIFF_DECREASED, ISC_SG_KERNEL, "gemm_b"), "5 %% > 2 %%");
	isc_diff_finish(&d);
	cr_assert(!isc_diff_group(ISC_SG_SYSCALL));
	isc_snapshot_destroy(base);
	isc_snapshot_destroy(cur);
}

/* A baseline read back from the JSON result equals the analysis it came from, and a
 * trace given as the baseline equals its JSON result. */
Test(gate, baseline_round_trips_through_json)
{
	struct isc_trace *t = load("workloads/gpu-bound.json.gz");
	struct isc_analysis *a = analyse(t, NULL);
	size_t len = 0;
	char *json = render(t, a, "json", &len);
	struct isc_snapshot *now = NULL, *back = NULL, *traced = NULL;
	struct isc_diag d = { "" };
	cr_assert_eq(isc_snapshot_from_analysis(t, a, "now", &now), 0);
	cr_assert_eq(isc_baseline_parse("base.json", json, len, &back, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_baseline_load(data_path("workloads/gpu-bound.json.gz"), NULL, NULL,
				       &traced, &d),
		     0, "%s", d.msg);
	const struct isc_snapshot *other[2] = { back, traced };
	for (int k = 0; k < 2; k++) {
		const struct isc_snapshot *b = other[k];
		for (int c = 0; c < ISC_CAT__COUNT; c++) {
			cr_assert_eq(b->pct[c], now->pct[c], "%s", isc_category_name(c));
		}
		cr_assert_eq(b->gpu_busy_pct, now->gpu_busy_pct);
		cr_assert_eq(b->window_us, now->window_us);
		cr_assert_str_eq(b->bottleneck, now->bottleneck);
		cr_assert_eq(b->n_rules, now->n_rules);
		for (int g = 0; g < ISC_SG__COUNT; g++) {
			cr_assert_eq(b->g[g].n, now->g[g].n);
			cr_assert_eq(b->g[g].events, now->g[g].events);
			for (size_t i = 0; i < b->g[g].n; i++) {
				cr_assert_str_eq(b->g[g].ops[i].name, now->g[g].ops[i].name);
				cr_assert_eq(b->g[g].ops[i].total_us, now->g[g].ops[i].total_us);
				cr_assert_eq(b->g[g].ops[i].pct_us[7], now->g[g].ops[i].pct_us[7]);
			}
		}
	}
	cr_assert_gt(now->g[ISC_SG_KERNEL].n, 0);
	/* so the budgets and the diff find nothing */
	struct isc_gate_spec spec;
	isc_gate_spec_init(&spec);
	struct isc_gate_result *r = gate(&spec, back, now, (const char *const[]){ "0", NULL });
	cr_assert(r->passed);
	cr_assert_eq(r->diff.by_change[ISC_DIFF_UNCHANGED], r->diff.n);
	isc_gate_result_destroy(r);
	isc_snapshot_destroy(now);
	isc_snapshot_destroy(back);
	isc_snapshot_destroy(traced);
	free(json);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

static void bad_baseline(const char *json, const char *why)
{
	struct isc_snapshot *s = NULL;
	struct isc_diag d = { "" };
	cr_assert_eq(isc_baseline_parse("b.json", json, strlen(json), &s, &d), -EINVAL, "%s", json);
	cr_assert_null(s);
	cr_assert(strstr(d.msg, why) != NULL, "'%s' lacks '%s'", d.msg, why);
}

Test(gate, bad_baselines_say_why)
{
	bad_baseline("{\"analysis_version\": \"1.0\", ", "b.json: not valid JSON");
	bad_baseline("[1, 2]", "b.json: not an inferscope-analyze result");
	bad_baseline("{\"events\": []}", "not an inferscope-analyze result (no analysis_version)");
	bad_baseline("{\"analysis_version\": \"1.0\", \"timeline_breakdown\": [{\"category\": "
		     "\"idle\", \"percentage\": 3}]}",
		     "no category 'cpu_preprocessing'");
	struct isc_snapshot *s = NULL;
	struct isc_diag d = { "" };
	cr_assert_eq(isc_baseline_load("/nonexistent/base.json", NULL, NULL, &s, &d), -EINVAL);
	cr_assert(strstr(d.msg, "/nonexistent/base.json: cannot open") != NULL, "%s", d.msg);
	cr_assert_eq(isc_baseline_load(data_path("validate/bad/thread-id-string.json"), NULL, NULL,
				       &s, &d),
		     -EINVAL, "a broken trace as baseline");
	cr_assert(strstr(d.msg, "thread-id-string.json") != NULL, "%s", d.msg);
}
