/* SPDX-License-Identifier: MIT */
/*
 * NVTX through the toolkit's v3 headers and NVTX_INJECTION64_PATH: ranges become
 * scopes in the annotation API's hierarchy, marks become instants inside them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/cuda/cuda-check.h"

TestSuite(nvtx, .init = cw_setup, .fini = cw_teardown, .timeout = 60);

static yajl_val scope(yajl_val t, const char *name)
{
	yajl_val e = isc_trace_find(t, "cpu_call", name, 0);
	cr_assert_not_null(e, "no scope %s", name);
	return e;
}

static void check_nvtx(yajl_val e, const char *parent, long long depth)
{
	cr_assert_str_eq(isc_trace_str(e, "metadata/source"), "nvtx");
	cr_assert_eq(isc_trace_int(e, "metadata/call_depth", -1), depth);
	const char *p = isc_trace_str(e, "metadata/parent_scope");
	if (parent) {
		cr_assert(p && strcmp(p, parent) == 0, "parent %s, expected %s", p, parent);
	} else {
		cr_assert_null(p);
	}
}

Test(nvtx, ranges_and_marks_join_the_scope_hierarchy)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-nvtx"), NULL };
	yajl_val t = cw_run(argv, NULL, &r);

	yajl_val outer = scope(t, "nvtx_outer");
	check_nvtx(outer, "api_outer", 1);
	cr_assert_str_eq(isc_trace_str(scope(t, "api_outer"), "metadata/source"), "api");
	check_nvtx(scope(t, "wide_\xc3\xbc"), "nvtx_outer", 2);
	check_nvtx(scope(t, "ex_range"), NULL, 0);
	check_nvtx(scope(t, "registered_range"), NULL, 0);

	yajl_val m = isc_trace_find(t, "instant", "mark_a", 0);
	cr_assert_not_null(m);
	cr_assert_str_eq(isc_trace_str(m, "metadata/source"), "nvtx");
	cr_assert_eq(isc_trace_int(m, "metadata/scope_id", -1),
		     isc_trace_int(outer, "metadata/scope_id", -2), "inside nvtx_outer");
	m = isc_trace_find(t, "instant", "domain_mark", 0);
	cr_assert_not_null(m);
	cr_assert_eq(isc_trace_int(m, "metadata/scope_id", -1),
		     isc_trace_int(scope(t, "registered_range"), "metadata/scope_id", -2));

	/* start/end: ended by another thread, belongs to the one that started it */
	yajl_val x = scope(t, "cross_thread");
	check_nvtx(x, NULL, 0);
	cr_assert_eq(isc_trace_int(x, "metadata/thread_id", -1),
		     isc_trace_int(t, "trace_metadata/pid", -2));
	cr_assert_geq(isc_trace_num(x, "duration_us", 0), 4000.0, "ended after the nap");
	yajl_val open = scope(t, "left_open");
	cr_assert(YAJL_IS_TRUE(isc_trace_get(open, "metadata/unterminated")));
	cr_assert_null(isc_trace_get(x, "metadata/unterminated"));
	yajl_tree_free(t);
	isc_run_free(&r);
}

Test(nvtx, off_by_configuration)
{
	struct isc_run r;
	const char *argv[] = { isc_test_workload("cw-nvtx"), NULL };
	const char *env[] = { "INFERSCOPE_NVTX=0", NULL };
	yajl_val t = cw_run(argv, env, &r);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "nvtx_outer"), 0);
	cr_assert_eq(isc_trace_count(t, "cpu_call", "api_outer"), 1, "the API still works");
	yajl_tree_free(t);
	isc_run_free(&r);
}
