/* SPDX-License-Identifier: MIT */
#include "analyzer/readers/inferscope-meta.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "analyzer/base/grow.h"
#include "analyzer/base/json-number.h"
#include "format/vocab.h"

/* A declarative shape check: a field list per object, recursive. */
enum mkind {
	M_STR,
	M_INT,
	M_UINT,
	M_NUM,
	M_NUM_NONNEG,
	M_BOOL,
	M_OBJ,
	M_MAP_OF,
	M_ARR_OF,
	M_PAIR,
	M_TRIPLE, /* three non-negative numbers */
	M_ENUM
};

struct mspec {
	const char *key;
	enum mkind kind;
	const struct mspec *sub;  /* M_OBJ: fields; M_MAP_OF / M_ARR_OF: one element spec */
	const char *const *words; /* M_ENUM */
	bool nullable;		  /* null stands for "not known" */
};

#define END                             \
	{                               \
		NULL, M_STR, NULL, NULL \
	}

static const char *const end_reasons[] = { "exit",	"_exit",     "exec",  "signal", "snapshot",
					   "api_flush", "recovered", "crash", NULL };
static const char *const cupti_status[] = { "active",  "disabled",	   "unavailable",
					    "refused", "version_mismatch", "not_used",
					    NULL };
static const char *const ts_sources[] = { "callback", "calibrated", NULL };

static const struct mspec uint_elem[] = { { "", M_UINT, NULL, NULL }, END };
static const struct mspec str_elem[] = { { "", M_STR, NULL, NULL }, END };
static const struct mspec pair_elem[] = { { "", M_PAIR, NULL, NULL }, END };

static const struct mspec clock_fields[] = { { "domain", M_STR, NULL, NULL },
					     { "unit", M_STR, NULL, NULL },
					     { "anchor_monotonic_us", M_NUM, NULL, NULL },
					     { "anchor_realtime_us", M_NUM, NULL, NULL },
					     { "anchor_realtime", M_STR, NULL, NULL },
					     END };
static const struct mspec capture_fields[] = { { "windows", M_ARR_OF, pair_elem, NULL }, END };
static const struct mspec dropped_fields[] = { { "total", M_UINT, NULL, NULL },
					       { "by_kind", M_MAP_OF, uint_elem, NULL },
					       { "by_thread", M_MAP_OF, uint_elem, NULL },
					       END };
static const struct mspec device_fields[] = { { "id", M_INT, NULL, NULL },
					      { "name", M_STR, NULL, NULL },
					      { "sm_count", M_UINT, NULL, NULL },
					      { "compute_capability", M_STR, NULL, NULL },
					      { "max_threads_per_sm", M_UINT, NULL, NULL },
					      { "max_blocks_per_sm", M_UINT, NULL, NULL },
					      { "max_registers_per_sm", M_UINT, NULL, NULL },
					      { "max_shared_memory_per_sm", M_UINT, NULL, NULL },
					      { "registers_per_block", M_UINT, NULL, NULL },
					      { "shared_memory_per_block", M_UINT, NULL, NULL },
					      { "warp_size", M_UINT, NULL, NULL },
					      { "global_memory_bytes", M_UINT, NULL, NULL },
					      END };
static const struct mspec device_elem[] = { { "", M_OBJ, device_fields, NULL }, END };
static const struct mspec cuda_fields[] = { { "runtime_version", M_STR, NULL, NULL },
					    { "driver_version", M_STR, NULL, NULL },
					    { "devices", M_ARR_OF, device_elem, NULL },
					    END };
static const struct mspec cupti_fields[] = { { "status", M_ENUM, NULL, cupti_status },
					     { "reason", M_STR, NULL, NULL },
					     { "library", M_STR, NULL, NULL },
					     { "version", M_INT, NULL, NULL },
					     { "holder", M_STR, NULL, NULL },
					     { "dropped_records", M_UINT, NULL, NULL },
					     { "timestamp_source", M_ENUM, NULL, ts_sources },
					     END };
static const struct mspec malloc_fields[] = { { "calls", M_UINT, NULL, NULL },
					      { "frees", M_UINT, NULL, NULL },
					      { "bytes_allocated", M_UINT, NULL, NULL },
					      { "bytes_freed", M_UINT, NULL, NULL },
					      { "live_bytes", M_INT, NULL, NULL },
					      { "peak_live_bytes", M_UINT, NULL, NULL },
					      { "sampled_events", M_UINT, NULL, NULL },
					      { "failed", M_UINT, NULL, NULL },
					      END };
static const struct mspec call_fields[] = {
	{ "count", M_UINT, NULL, NULL },	{ "total_us", M_NUM_NONNEG, NULL, NULL },
	{ "max_us", M_NUM_NONNEG, NULL, NULL }, { "bytes", M_UINT, NULL, NULL },
	{ "events", M_UINT, NULL, NULL },	END
};
static const struct mspec call_elem[] = { { "", M_OBJ, call_fields, NULL }, END };
static const struct mspec thread_fields[] = {
	{ "thread_id", M_INT, NULL, NULL },	   { "name", M_STR, NULL, NULL },
	{ "malloc", M_OBJ, malloc_fields, NULL },  { "syscalls", M_MAP_OF, call_elem, NULL },
	{ "cuda_api", M_MAP_OF, call_elem, NULL }, END
};
static const struct mspec thread_elem[] = { { "", M_OBJ, thread_fields, NULL }, END };
static const struct mspec triple_elem[] = { { "", M_TRIPLE, NULL, NULL }, END };
static const struct mspec latency_elem[] = { { "", M_ARR_OF, triple_elem, NULL }, END };
static const struct mspec aggregates_fields[] = { { "threads", M_ARR_OF, thread_elem, NULL },
						  { ISC_KEY_SYSCALL_LATENCY, M_MAP_OF, latency_elem,
						    NULL },
						  END };

/* An image of the process that exec'd before the traced one (a wrapper, a shim). */
static const struct mspec chain_fields[] = { { "segment", M_UINT, NULL, NULL },
					     { "pid", M_INT, NULL, NULL },
					     { "command_line", M_ARR_OF, str_elem, NULL },
					     { "executable", M_STR, NULL, NULL },
					     { "start_us", M_NUM, NULL, NULL },
					     { "end_us", M_NUM, NULL, NULL },
					     { "end_reason", M_ENUM, NULL, end_reasons },
					     { "dropped_events", M_OBJ, dropped_fields, NULL },
					     END };
static const struct mspec chain_elem[] = { { "", M_OBJ, chain_fields, NULL }, END };

static const struct mspec meta_fields[] = {
	{ "timestamp_created", M_STR, NULL, NULL },
	{ "duration_ms", M_NUM_NONNEG, NULL, NULL },
	{ "start_us", M_NUM, NULL, NULL },
	{ "end_us", M_NUM, NULL, NULL },
	{ "pid", M_INT, NULL, NULL },
	{ "ppid", M_INT, NULL, NULL },
	{ "root_pid", M_INT, NULL, NULL },
	{ "exec_seq", M_UINT, NULL, NULL },
	{ "exec_chain", M_ARR_OF, chain_elem, NULL },
	{ "command_line", M_ARR_OF, str_elem, NULL },
	{ "executable", M_STR, NULL, NULL },
	{ "hostname", M_STR, NULL, NULL },
	{ "inferscope_version", M_STR, NULL, NULL },
	{ "clock", M_OBJ, clock_fields, NULL },
	{ "end_reason", M_ENUM, NULL, end_reasons },
	{ "complete", M_BOOL, NULL, NULL },
	{ "configuration", M_MAP_OF, str_elem, NULL },
	{ "capture", M_OBJ, capture_fields, NULL },
	/* null in a trace recovered from a spill file: the counts died with the process */
	{ "dropped_events", M_OBJ, dropped_fields, NULL, true },
	{ "cuda", M_OBJ, cuda_fields, NULL },
	{ "cupti", M_OBJ, cupti_fields, NULL },
	{ "python_version", M_STR, NULL, NULL },
	{ "gpu_model", M_STR, NULL, NULL },
	{ "aggregates", M_OBJ, aggregates_fields, NULL },
	END
};

static const struct mspec sysinfo_fields[] = {
	{ "cpu_count", M_UINT, NULL, NULL },  { "cpu_model", M_STR, NULL, NULL },
	{ "numa_nodes", M_UINT, NULL, NULL }, { "ram_gb", M_NUM_NONNEG, NULL, NULL },
	{ "gpu_count", M_UINT, NULL, NULL },  { "kernel", M_STR, NULL, NULL },
	{ "page_size", M_UINT, NULL, NULL },  END
};

static const char *expect(enum mkind k)
{
	static const char *const t[] = {
		[M_STR] = "a string",
		[M_INT] = "an integer",
		[M_UINT] = "a non-negative integer",
		[M_NUM] = "a number",
		[M_NUM_NONNEG] = "a non-negative number",
		[M_BOOL] = "a boolean",
		[M_OBJ] = "an object",
		[M_MAP_OF] = "an object",
		[M_ARR_OF] = "an array",
		[M_PAIR] = "an array of two numbers",
		[M_TRIPLE] = "an array of three non-negative numbers",
		[M_ENUM] = "one of the documented words",
	};
	return t[k];
}

static bool check(const struct isc_jdom *d, uint32_t node, const struct mspec *s, char *path,
		  size_t cap, char *err, size_t n);

static bool check_fields(const struct isc_jdom *d, uint32_t obj, const struct mspec *fields,
			 char *path, size_t cap, char *err, size_t n)
{
	size_t len = strlen(path);
	for (const struct mspec *f = fields; f->key != NULL; f++) {
		uint32_t c = isc_jdom_get(d, obj, f->key);
		if (c == UINT32_MAX) {
			continue;
		}
		snprintf(path + len, cap - len, ".%s", f->key);
		if (!check(d, c, f, path, cap, err, n)) {
			return false;
		}
		path[len] = '\0';
	}
	return true;
}

static bool check_elems(const struct isc_jdom *d, uint32_t node, const struct mspec *elem,
			bool keyed, char *path, size_t cap, char *err, size_t n)
{
	size_t len = strlen(path);
	unsigned i = 0;
	for (uint32_t c = isc_jdom_first(d, node); c != UINT32_MAX; c = isc_jdom_next(d, c), i++) {
		if (keyed) {
			snprintf(path + len, cap - len, ".%s", isc_jdom_keyof(d, c));
		} else {
			snprintf(path + len, cap - len, "[%u]", i);
		}
		if (!check(d, c, elem, path, cap, err, n)) {
			return false;
		}
		path[len] = '\0';
	}
	return true;
}

static bool scalar_ok(const struct isc_jdom *d, uint32_t node, const struct mspec *s)
{
	int t = isc_jdom_type(d, node);
	double x = 0;
	bool num = isc_jdom_num(d, node, &x);
	switch (s->kind) {
	case M_STR:
		return t == ISC_J_STRING;
	case M_INT:
		return t == ISC_J_INT;
	case M_UINT:
		return t == ISC_J_INT && x >= 0;
	case M_NUM:
		return num;
	case M_NUM_NONNEG:
		return num && x >= 0;
	case M_BOOL:
		return t == ISC_J_BOOL;
	case M_ENUM:
		for (int i = 0; t == ISC_J_STRING && s->words[i] != NULL; i++) {
			if (strcmp(s->words[i], isc_jdom_str(d, node)) == 0) {
				return true;
			}
		}
		return false;
	case M_PAIR: {
		uint32_t a = isc_jdom_first(d, node);
		uint32_t b = isc_jdom_next(d, a);
		double y;
		return t == ISC_J_ARRAY && isc_jdom_num(d, a, &y) && isc_jdom_num(d, b, &y) &&
		       isc_jdom_next(d, b) == UINT32_MAX;
	}
	case M_TRIPLE: {
		double y;
		uint32_t c = isc_jdom_first(d, node);
		for (int k = 0; k < 3; k++, c = isc_jdom_next(d, c)) {
			if (!isc_jdom_num(d, c, &y) || y < 0) {
				return false;
			}
		}
		return t == ISC_J_ARRAY && c == UINT32_MAX;
	}
	default:
		return false;
	}
}

static bool check(const struct isc_jdom *d, uint32_t node, const struct mspec *s, char *path,
		  size_t cap, char *err, size_t n)
{
	int t = isc_jdom_type(d, node);
	bool ok;
	if (t == ISC_J_NULL && s->nullable) {
		return true;
	}
	if (s->kind == M_OBJ || s->kind == M_MAP_OF) {
		ok = t == ISC_J_OBJECT;
	} else if (s->kind == M_ARR_OF) {
		ok = t == ISC_J_ARRAY;
	} else {
		ok = scalar_ok(d, node, s);
	}
	if (!ok) {
		snprintf(err, n, "%s: expected %s, got %s", path, expect(s->kind),
			 t == ISC_J_STRING && s->kind == M_ENUM ? isc_jdom_str(d, node)
								: isc_jtype_name(t));
		return false;
	}
	if (s->kind == M_OBJ) {
		return check_fields(d, node, s->sub, path, cap, err, n);
	}
	if (s->kind == M_MAP_OF || s->kind == M_ARR_OF) {
		return check_elems(d, node, s->sub, s->kind == M_MAP_OF, path, cap, err, n);
	}
	return true;
}

static uint32_t intern_str(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t node)
{
	const char *s = isc_jdom_str(d, node);
	return s != NULL ? isc_trace_intern(rc->t, s, strlen(s)) : 0;
}

static int64_t get_int(const struct isc_jdom *d, uint32_t obj, const char *key, int64_t dflt)
{
	double x;
	return isc_jdom_num(d, isc_jdom_get(d, obj, key), &x) ? isc_d2i(x) : dflt;
}

static uint32_t joined(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t arr)
{
	char buf[512];
	size_t len = 0;
	buf[0] = '\0';
	for (uint32_t c = isc_jdom_first(d, arr); c != UINT32_MAX; c = isc_jdom_next(d, c)) {
		const char *s = isc_jdom_str(d, c);
		if (s != NULL && len < sizeof(buf) - 1) {
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						len ? " " : "", s);
			len = len < sizeof(buf) ? len : sizeof(buf) - 1;
		}
	}
	return isc_trace_intern(rc->t, buf, len);
}

static void apply_command(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t arr)
{
	rc->t->inputs[rc->input].command = joined(rc, d, arr);
}

static void apply_dropped(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t obj);

static void apply_chain(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t arr)
{
	struct isc_input *in = &rc->t->inputs[rc->input];
	for (uint32_t c = isc_jdom_first(d, arr); c != UINT32_MAX; c = isc_jdom_next(d, c)) {
		if (in->startup_images++ == 0) {
			in->startup_command = joined(rc, d, isc_jdom_get(d, c, "command_line"));
		}
		/* what the earlier images dropped is lost from the same trace */
		apply_dropped(rc, d, isc_jdom_get(d, c, "dropped_events"));
	}
}

/* Adds: the trace's own counts and those of each exec_chain image. */
static void apply_dropped(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t obj)
{
	struct isc_input *in = &rc->t->inputs[rc->input];
	in->dropped_total += (uint64_t)get_int(d, obj, "total", 0);
	uint32_t by_kind = isc_jdom_get(d, obj, "by_kind");
	for (uint32_t c = isc_jdom_first(d, by_kind); c != UINT32_MAX; c = isc_jdom_next(d, c)) {
		const char *k = isc_jdom_keyof(d, c);
		double x = 0;
		isc_jdom_num(d, c, &x);
		struct isc_agg a = { .name = isc_trace_intern(rc->t, k, strlen(k)),
				     .count = (uint64_t)x };
		isc_agg_add(&in->dropped_by_kind, &a);
	}
}

static void apply_calls(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t map,
			struct isc_agg_list *into)
{
	for (uint32_t c = isc_jdom_first(d, map); c != UINT32_MAX; c = isc_jdom_next(d, c)) {
		const char *k = isc_jdom_keyof(d, c);
		double total = 0, max = 0;
		isc_jdom_num(d, isc_jdom_get(d, c, "total_us"), &total);
		isc_jdom_num(d, isc_jdom_get(d, c, "max_us"), &max);
		struct isc_agg a = {
			.name = isc_trace_intern(rc->t, k, strlen(k)),
			.count = (uint64_t)get_int(d, c, "count", 0),
			.total_us = total,
			.max_us = max,
			.bytes = (uint64_t)get_int(d, c, "bytes", 0),
		};
		isc_agg_add(into, &a);
	}
}

/* aggregates.syscall_latency: [low_ns, high_ns, calls] per bucket, by call name. */
static void apply_latency(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t map)
{
	struct isc_input *in = &rc->t->inputs[rc->input];
	in->has_latency = map != UINT32_MAX;
	for (uint32_t c = isc_jdom_first(d, map); c != UINT32_MAX; c = isc_jdom_next(d, c)) {
		const char *k = isc_jdom_keyof(d, c);
		uint32_t name = isc_trace_intern(rc->t, k, strlen(k));
		for (uint32_t b = isc_jdom_first(d, c); b != UINT32_MAX; b = isc_jdom_next(d, b)) {
			double v[3] = { 0, 0, 0 };
			uint32_t x = isc_jdom_first(d, b);
			for (int i = 0; i < 3; i++, x = isc_jdom_next(d, x)) {
				isc_jdom_num(d, x, &v[i]);
			}
			if (v[2] < 1 || v[1] <= v[0] ||
			    ISC_GROW(in->latency.v, in->latency.cap, in->latency.n + 1, 64) < 0) {
				continue; /* an empty or reversed bucket says nothing */
			}
			in->latency.v[in->latency.n++] =
				(struct isc_lat_bucket){ .name = name,
							 .lo = isc_d2i(v[0]),
							 .hi = isc_d2i(v[1]),
							 .n = (uint64_t)v[2] };
		}
	}
}

static void apply_aggregates(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t obj)
{
	struct isc_input *in = &rc->t->inputs[rc->input];
	uint32_t threads = isc_jdom_get(d, obj, "threads");
	in->has_aggregates = threads != UINT32_MAX;
	for (uint32_t th = isc_jdom_first(d, threads); th != UINT32_MAX;
	     th = isc_jdom_next(d, th)) {
		int64_t tid = get_int(d, th, "thread_id", 0);
		uint32_t name = intern_str(rc, d, isc_jdom_get(d, th, "name"));
		uint32_t k = isc_trace_thread(rc->t, rc->input, tid);
		if (k != UINT32_MAX && name != 0) {
			rc->t->threads[k].name = name;
		}
		uint32_t m = isc_jdom_get(d, th, "malloc");
		in->malloc_calls += (uint64_t)get_int(d, m, "calls", 0);
		in->malloc_frees += (uint64_t)get_int(d, m, "frees", 0);
		in->malloc_bytes += (uint64_t)get_int(d, m, "bytes_allocated", 0);
		in->malloc_sampled += (uint64_t)get_int(d, m, "sampled_events", 0);
		in->malloc_failed += (uint64_t)get_int(d, m, "failed", 0);
		in->malloc_bytes_freed += (uint64_t)get_int(d, m, "bytes_freed", 0);
		in->malloc_live += get_int(d, m, "live_bytes", 0);
		apply_calls(rc, d, isc_jdom_get(d, th, "syscalls"), &in->agg_syscalls);
		apply_calls(rc, d, isc_jdom_get(d, th, "cuda_api"), &in->agg_cuda_api);
	}
	apply_latency(rc, d, isc_jdom_get(d, obj, ISC_KEY_SYSCALL_LATENCY));
}

static void apply_device(struct isc_read_ctx *rc, const struct isc_jdom *d, uint32_t cuda)
{
	struct isc_device_info *dev = &rc->t->inputs[rc->input].device;
	uint32_t d0 = isc_jdom_first(d, isc_jdom_get(d, cuda, "devices"));
	if (d0 == UINT32_MAX) {
		return;
	}
	dev->present = true;
	dev->sm_count = (int)get_int(d, d0, "sm_count", 0);
	dev->max_threads_per_sm = (int)get_int(d, d0, "max_threads_per_sm", 0);
	dev->max_blocks_per_sm = (int)get_int(d, d0, "max_blocks_per_sm", 0);
	dev->max_registers_per_sm = (int)get_int(d, d0, "max_registers_per_sm", 0);
	dev->max_shared_memory_per_sm = (int)get_int(d, d0, "max_shared_memory_per_sm", 0);
	dev->warp_size = (int)get_int(d, d0, "warp_size", 32);
}

static int64_t us_to_ns(const struct isc_jdom *d, uint32_t obj, const char *key)
{
	double x;
	return isc_jdom_num(d, isc_jdom_get(d, obj, key), &x) ? isc_d2i(x * 1000.0) : 0;
}

int isc_meta_apply(struct isc_read_ctx *rc, const struct isc_jdom *d, char *err, size_t n)
{
	char path[256] = "";
	if (!check_fields(d, 0, meta_fields, path, sizeof(path), err, n)) {
		return -1;
	}
	struct isc_input *in = &rc->t->inputs[rc->input];
	in->pid = get_int(d, 0, "pid", 0);
	in->ppid = get_int(d, 0, "ppid", 0);
	in->hostname = intern_str(rc, d, isc_jdom_get(d, 0, "hostname"));
	in->version = intern_str(rc, d, isc_jdom_get(d, 0, "inferscope_version"));
	in->end_reason = intern_str(rc, d, isc_jdom_get(d, 0, "end_reason"));
	in->gpu_model = intern_str(rc, d, isc_jdom_get(d, 0, "gpu_model"));
	uint32_t complete = isc_jdom_get(d, 0, "complete");
	in->complete = complete == UINT32_MAX ? -1 : d->n[complete].v.b;
	in->meta_start_ns = us_to_ns(d, 0, "start_us");
	in->meta_end_ns = us_to_ns(d, 0, "end_us");
	uint32_t clock = isc_jdom_get(d, 0, "clock");
	double mono, real;
	in->has_anchor = isc_jdom_num(d, isc_jdom_get(d, clock, "anchor_monotonic_us"), &mono) &&
			 isc_jdom_num(d, isc_jdom_get(d, clock, "anchor_realtime_us"), &real);
	in->anchor_mono_ns = in->has_anchor ? isc_d2i(mono * 1000.0) : 0;
	in->anchor_real_ns = in->has_anchor ? isc_d2i(real * 1000.0) : 0;
	apply_command(rc, d, isc_jdom_get(d, 0, "command_line"));
	apply_chain(rc, d, isc_jdom_get(d, 0, "exec_chain"));
	apply_dropped(rc, d, isc_jdom_get(d, 0, "dropped_events"));
	uint32_t cupti = isc_jdom_get(d, 0, "cupti");
	in->cupti_status = intern_str(rc, d, isc_jdom_get(d, cupti, "status"));
	in->cupti_reason = intern_str(rc, d, isc_jdom_get(d, cupti, "reason"));
	in->cupti_dropped = (uint64_t)get_int(d, cupti, "dropped_records", 0);
	apply_device(rc, d, isc_jdom_get(d, 0, "cuda"));
	apply_aggregates(rc, d, isc_jdom_get(d, 0, "aggregates"));
	uint32_t sampling = isc_jdom_get(d, 0, "sampling");
	isc_jdom_num(d, isc_jdom_get(d, sampling, "cpu_hz"), &in->sample_hz);
	in->samples_lost = (uint64_t)get_int(d, sampling, "lost", 0);
	in->sampling_python = intern_str(rc, d, isc_jdom_get(d, sampling, "python"));
	in->unsampled_threads = (uint64_t)get_int(d, sampling, "unsampled_threads", 0);
	in->unsampled_reason = intern_str(rc, d, isc_jdom_get(d, sampling, "unsampled_reason"));
	uint32_t unwritten = isc_jdom_get(d, 0, ISC_KEY_UNWRITTEN);
	in->unwritten_events = (uint64_t)get_int(d, unwritten, "events", 0);
	in->unwritten_reason = intern_str(rc, d, isc_jdom_get(d, unwritten, "reason"));
	return 0;
}

int isc_sysinfo_apply(struct isc_read_ctx *rc, const struct isc_jdom *d, char *err, size_t n)
{
	char path[256] = "";
	if (!check_fields(d, 0, sysinfo_fields, path, sizeof(path), err, n)) {
		return -1;
	}
	rc->t->inputs[rc->input].cpu_count = (int)get_int(d, 0, "cpu_count", 0);
	return 0;
}
