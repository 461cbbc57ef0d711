/* SPDX-License-Identifier: MIT */
#include "tests/cuda/cuda-check.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/simgpu/truth/truth-reader.h"

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
	static const char *const types[] = { "gpu_kernel", "h2d_copy",	 "d2h_copy", "d2d_copy",
					     "h2h_copy",   "gpu_memset", NULL };
	for (int i = 0; type && types[i]; i++) {
		if (strcmp(type, types[i]) == 0) {
			return true;
		}
	}
	return false;
}

size_t cw_api_count(yajl_val trace, const char *source)
{
	yajl_val events = isc_trace_events(trace);
	size_t n = 0;
	for (size_t i = 0; events && i < YAJL_GET_ARRAY(events)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(events)->values[i];
		const char *type = isc_trace_str(e, "type");
		const char *s = isc_trace_str(e, "metadata/source");
		n += type && strcmp(type, "cuda_api") == 0 &&
		     (source == NULL || (s && strcmp(s, source) == 0));
	}
	return n;
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

/* Kinds of GPU work, to match operations with events of their type. */
enum { CLS_KERNEL, CLS_COPY, CLS_MEMSET };

static int op_class(const struct simgpu_op *op)
{
	return op->type == SIMGPU_OP_KERNEL   ? CLS_KERNEL
	       : op->type == SIMGPU_OP_MEMSET ? CLS_MEMSET
					      : CLS_COPY;
}

static int event_class(const char *type)
{
	return strcmp(type, "gpu_kernel") == 0	 ? CLS_KERNEL
	       : strcmp(type, "gpu_memset") == 0 ? CLS_MEMSET
						 : CLS_COPY;
}

struct gpu_ev {
	long long start, end;
	int cls;
	bool used;
	yajl_val v;
};

struct api_ev {
	long long corr;
	yajl_val v;
};

static int truth_by_corr(const void *a, const void *b)
{
	const struct simgpu_truth_api *x = a, *y = b;
	return (x->correlation_id > y->correlation_id) - (x->correlation_id < y->correlation_id);
}

/* The truth's call with this correlation id (its calls sorted by cw_check_truth). */
static const struct simgpu_truth_api *truth_call(const struct simgpu_truth *truth, uint32_t corr)
{
	struct simgpu_truth_api key;
	key.correlation_id = corr;
	return bsearch(&key, truth->api, truth->n_api, sizeof(*truth->api), truth_by_corr);
}

/* The trace indexed: GPU events by start, cuda_api events by correlation id. */
struct index {
	struct gpu_ev *gpu;
	size_t n_gpu;
	struct api_ev *api;
	size_t n_api;
};

static int by_start(const void *a, const void *b)
{
	const struct gpu_ev *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int by_corr(const void *a, const void *b)
{
	const struct api_ev *x = a, *y = b;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static void index_trace(yajl_val trace, struct index *ix)
{
	yajl_val events = isc_trace_events(trace);
	size_t n = YAJL_GET_ARRAY(events)->len;
	memset(ix, 0, sizeof(*ix));
	ix->gpu = calloc(n + 1, sizeof(*ix->gpu));
	ix->api = calloc(n + 1, sizeof(*ix->api));
	for (size_t i = 0; i < n; i++) {
		yajl_val e = YAJL_GET_ARRAY(events)->values[i];
		const char *type = isc_trace_str(e, "type");
		if (cw_is_gpu_work(type)) {
			struct gpu_ev *g = &ix->gpu[ix->n_gpu++];
			g->start = cw_start_ns(e);
			g->end = cw_end_ns(e);
			g->cls = event_class(type);
			g->v = e;
		} else if (type && strcmp(type, "cuda_api") == 0) {
			struct api_ev *a = &ix->api[ix->n_api++];
			a->corr = isc_trace_int(e, "metadata/correlation_id", -1);
			a->v = e;
		}
	}
	qsort(ix->gpu, ix->n_gpu, sizeof(*ix->gpu), by_start);
	qsort(ix->api, ix->n_api, sizeof(*ix->api), by_corr);
}

static yajl_val api_of(const struct index *ix, long long corr)
{
	struct api_ev key = { corr, NULL };
	struct api_ev *a = bsearch(&key, ix->api, ix->n_api, sizeof(*ix->api), by_corr);
	return a ? a->v : NULL;
}

/* The trace event of op: same kind, start and end within 1 us (plus rounding). Two
 * kernels of different threads may start less than 1 us apart on two streams: the
 * closest candidate wins, not the first one in the window. */
static yajl_val match(struct index *ix, const struct simgpu_op *op)
{
	const long long tol = 1001;
	long long start = (long long)op->start_ns, end = (long long)op->end_ns;
	size_t lo = 0, hi = ix->n_gpu;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->gpu[mid].start < start - tol) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	struct gpu_ev *best = NULL;
	long long best_d = 0;
	for (size_t i = lo; i < ix->n_gpu && ix->gpu[i].start <= start + tol; i++) {
		struct gpu_ev *g = &ix->gpu[i];
		long long d = llabs(g->start - start) + llabs(g->end - end);
		if (!g->used && g->cls == op_class(op) && llabs(g->end - end) <= tol &&
		    (best == NULL || d < best_d)) {
			best = g;
			best_d = d;
		}
	}
	if (best == NULL) {
		return NULL;
	}
	best->used = true;
	return best->v;
}

/* The event's host call is the truth's call that issued op. */
static void check_correlation(const struct index *ix, yajl_val ev, const struct simgpu_op *op,
			      const struct simgpu_truth *truth)
{
	long long corr = isc_trace_int(ev, "metadata/correlation_id", -1);
	yajl_val api = api_of(ix, corr);
	cr_assert_not_null(api, "%s at %.3f us: no cuda_api event with correlation_id %lld",
			   isc_trace_str(ev, "name"), op->start_ns / 1e3, corr);
	const struct simgpu_truth_api *call = truth_call(truth, op->correlation_id);
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
	struct index ix;
	char err[512];
	cr_assert_eq(simgpu_truth_create(truth_path, &truth, err, sizeof(err)), 0, "%s", err);
	index_trace(trace, &ix);
	qsort(truth->api, truth->n_api, sizeof(*truth->api), truth_by_corr);
	cr_assert_eq(ix.n_gpu, truth->n_ops, "GPU events in the trace: %zu, operations: %zu",
		     ix.n_gpu, truth->n_ops);
	for (size_t k = 0; k < truth->n_ops; k++) {
		const struct simgpu_op *op = &truth->ops[k];
		yajl_val ev = match(&ix, op);
		cr_assert_not_null(ev, "op %zu (%s, %llu..%llu ns): no GPU event within 1 us", k,
				   op->name ? op->name : "", (unsigned long long)op->start_ns,
				   (unsigned long long)op->end_ns);
		check_correlation(&ix, ev, op, truth);
		if (op->type == SIMGPU_OP_KERNEL && op->name && op->name[0]) {
			cr_assert_str_eq(isc_trace_str(ev, "name"), op->name);
		} else if (op->type != SIMGPU_OP_KERNEL) {
			cr_assert_eq(isc_trace_int(ev, "metadata/bytes", -1), (long long)op->bytes);
		}
	}
	size_t n = ix.n_gpu;
	free(ix.gpu);
	free(ix.api);
	simgpu_truth_destroy(truth);
	return n;
}
