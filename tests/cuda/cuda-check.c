/* SPDX-License-Identifier: MIT */
#include "cuda-check.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "truth-reader.h"

char *cw_dir;

void cw_setup(void)
{
	cw_dir = isc_test_tmpdir();
	cr_assert_not_null(cw_dir);
}

void cw_teardown(void)
{
	isc_test_rmrf(cw_dir);
	free(cw_dir);
}

const char *cw_path(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s/%s", cw_dir, name);
	return buf;
}

yajl_val cw_run(const char *const argv[], const char *const env[], struct isc_run *r)
{
	cr_assert_eq(isc_test_run(argv, env, true, cw_dir, r), 0, "cannot run %s", argv[0]);
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0,
		  "%s failed (status %d)\nstdout: %s\nstderr: %s", argv[0], r->status, r->out,
		  r->err);
	yajl_val t = isc_test_load_json(cw_path("trace.json"));
	cr_assert_not_null(t, "%s wrote no trace\nstderr: %s", argv[0], r->err);
	return t;
}

long long cw_out(const struct isc_run *r, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = r->out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
		if (strncmp(p, key, n) == 0 && p[n] == '=') {
			return atoll(p + n + 1);
		}
	}
	return -1;
}

bool cw_is_gpu_work(const char *type)
{
	static const char *const types[] = { "gpu_kernel", "h2d_copy", "d2h_copy", "d2d_copy",
					     "h2h_copy", "gpu_memset", NULL };
	for (int i = 0; type && types[i]; i++) {
		if (strcmp(type, types[i]) == 0) {
			return true;
		}
	}
	return false;
}

size_t cw_api_count(yajl_val trace, const char *source)
{
	size_t n = 0;
	for (size_t i = 0;; i++) {
		yajl_val e = isc_trace_find(trace, "cuda_api", NULL, i);
		if (e == NULL) {
			return n;
		}
		const char *s = isc_trace_str(e, "metadata/source");
		n += source == NULL || (s && strcmp(s, source) == 0);
	}
}

yajl_val cw_api_by_corr(yajl_val trace, long long corr)
{
	for (size_t i = 0;; i++) {
		yajl_val e = isc_trace_find(trace, "cuda_api", NULL, i);
		if (e == NULL || isc_trace_int(e, "metadata/correlation_id", -1) == corr) {
			return e;
		}
	}
}

long long cw_start_ns(yajl_val ev)
{
	return llround(isc_trace_num(ev, "timestamp_start_us", 0) * 1000.0);
}

long long cw_end_ns(yajl_val ev)
{
	return cw_start_ns(ev) + llround(isc_trace_num(ev, "duration_us", 0) * 1000.0);
}

static bool same_kind(const struct simgpu_op *op, const char *type)
{
	switch (op->type) {
	case SIMGPU_OP_KERNEL: return strcmp(type, "gpu_kernel") == 0;
	case SIMGPU_OP_MEMSET: return strcmp(type, "gpu_memset") == 0;
	default: return strstr(type, "_copy") != NULL;
	}
}

/* The trace event of op: same kind, start and end within 1 us (plus rounding). */
static yajl_val match(yajl_val trace, const struct simgpu_op *op, bool *used)
{
	yajl_val events = isc_trace_events(trace);
	for (size_t i = 0; i < YAJL_GET_ARRAY(events)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(events)->values[i];
		const char *type = isc_trace_str(e, "type");
		if (used[i] || !cw_is_gpu_work(type) || !same_kind(op, type)) {
			continue;
		}
		if (llabs(cw_start_ns(e) - (long long)op->start_ns) <= 1001 &&
		    llabs(cw_end_ns(e) - (long long)op->end_ns) <= 1001) {
			used[i] = true;
			return e;
		}
	}
	return NULL;
}

/* The event's host call is the truth's call that issued op. */
static void check_correlation(yajl_val trace, yajl_val ev, const struct simgpu_op *op,
			      const struct simgpu_truth *truth)
{
	long long corr = isc_trace_int(ev, "metadata/correlation_id", -1);
	yajl_val api = cw_api_by_corr(trace, corr);
	cr_assert_not_null(api, "%s at %.3f us: no cuda_api event with correlation_id %lld",
			   isc_trace_str(ev, "name"), op->start_ns / 1e3, corr);
	const struct simgpu_truth_api *call = simgpu_truth_api_by_correlation(truth,
									       op->correlation_id);
	cr_assert_not_null(call, "the truth lacks call %u", op->correlation_id);
	cr_assert_str_eq(isc_trace_str(api, "name"), call->name,
			 "operation of %s correlated with %s", call->name,
			 isc_trace_str(api, "name"));
	cr_assert_eq(isc_trace_int(ev, "metadata/thread_id", -1), (long long)op->thread_id,
		     "%s: thread", call->name);
	cr_assert_eq(isc_trace_int(api, "metadata/thread_id", -1), (long long)call->thread_id);
}

size_t cw_check_truth(yajl_val trace, const char *truth_path)
{
	struct simgpu_truth *truth = NULL;
	char err[512];
	cr_assert_eq(simgpu_truth_create(truth_path, &truth, err, sizeof(err)), 0, "%s", err);
	yajl_val events = isc_trace_events(trace);
	size_t n = YAJL_GET_ARRAY(events)->len, gpu = 0;
	bool *used = calloc(n ? n : 1, sizeof(bool));
	for (size_t i = 0; i < n; i++) {
		gpu += cw_is_gpu_work(isc_trace_str(YAJL_GET_ARRAY(events)->values[i], "type"));
	}
	cr_assert_eq(gpu, truth->n_ops, "GPU events in the trace: %zu, operations: %zu", gpu,
		     truth->n_ops);
	for (size_t k = 0; k < truth->n_ops; k++) {
		const struct simgpu_op *op = &truth->ops[k];
		yajl_val ev = match(trace, op, used);
		cr_assert_not_null(ev, "operation %zu (%s, %llu..%llu ns) has no GPU event within 1 us",
				   k, op->name ? op->name : "", (unsigned long long)op->start_ns,
				   (unsigned long long)op->end_ns);
		check_correlation(trace, ev, op, truth);
		if (op->type == SIMGPU_OP_KERNEL && op->name && op->name[0]) {
			cr_assert_str_eq(isc_trace_str(ev, "name"), op->name);
		} else if (op->type != SIMGPU_OP_KERNEL) {
			cr_assert_eq(isc_trace_int(ev, "metadata/bytes", -1), (long long)op->bytes);
		}
	}
	free(used);
	simgpu_truth_destroy(truth);
	return gpu;
}
