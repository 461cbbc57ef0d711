/* SPDX-License-Identifier: MIT */
/*
 * The ground-truth reader. Truth files are small (one line per operation), so a
 * yajl tree is enough; unknown fields are ignored, as the trace readers do.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "tests/simgpu/truth/truth-reader.h"

static void fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static char *slurp(const char *path, int *error)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t n = 0;
	size_t cap = 0;
	size_t got;

	if (!f) {
		*error = -errno;
		return NULL;
	}
	do {
		if (cap - n < 65536) {
			char *grown = realloc(text, cap = cap * 2 + 65536);

			if (!grown) {
				free(text);
				fclose(f);
				*error = -ENOMEM;
				return NULL;
			}
			text = grown;
		}
		got = fread(text + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	text[n] = '\0';
	return text;
}

static yajl_val field(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };

	return yajl_tree_get(obj, path, yajl_t_any);
}

static uint64_t u64(yajl_val obj, const char *key)
{
	yajl_val v = field(obj, key);

	return v && YAJL_IS_INTEGER(v) ? (uint64_t)YAJL_GET_INTEGER(v) : 0;
}

static const char *str(yajl_val obj, const char *key)
{
	yajl_val v = field(obj, key);

	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "";
}

static bool flag(yajl_val obj, const char *key)
{
	yajl_val v = field(obj, key);

	return v && YAJL_IS_TRUE(v);
}

static uint8_t mem_kind(const char *s)
{
	return !strcmp(s, "pageable")  ? SIMGPU_MEM_PAGEABLE
	       : !strcmp(s, "pinned")  ? SIMGPU_MEM_PINNED
	       : !strcmp(s, "device")  ? SIMGPU_MEM_DEVICE
	       : !strcmp(s, "managed") ? SIMGPU_MEM_MANAGED
				       : SIMGPU_MEM_UNKNOWN;
}

static uint8_t copy_kind(const char *s)
{
	return !strcmp(s, "HtoD")   ? SIMGPU_COPY_HTOD
	       : !strcmp(s, "DtoH") ? SIMGPU_COPY_DTOH
	       : !strcmp(s, "DtoD") ? SIMGPU_COPY_DTOD
	       : !strcmp(s, "HtoH") ? SIMGPU_COPY_HTOH
	       : !strcmp(s, "PtoP") ? SIMGPU_COPY_PTOP
				    : 0;
}

static void triple(yajl_val obj, const char *key, uint32_t out[3])
{
	yajl_val v = field(obj, key);
	size_t i;

	for (i = 0; v && YAJL_IS_ARRAY(v) && i < 3 && i < v->u.array.len; i++) {
		yajl_val x = v->u.array.values[i];

		out[i] = YAJL_IS_INTEGER(x) ? (uint32_t)YAJL_GET_INTEGER(x) : 0;
	}
}

static int read_op(yajl_val o, struct simgpu_op *op)
{
	const char *type = str(o, "type");

	memset(op, 0, sizeof(*op));
	op->type = !strcmp(type, "kernel")   ? SIMGPU_OP_KERNEL
		   : !strcmp(type, "memcpy") ? SIMGPU_OP_MEMCPY
		   : !strcmp(type, "memset") ? SIMGPU_OP_MEMSET
					     : 0;
	op->name = strdup(str(o, "name"));
	if (!op->name) {
		return -ENOMEM;
	}
	op->device = (int32_t)u64(o, "device");
	op->stream_id = (uint32_t)u64(o, "stream");
	op->enqueue_ns = u64(o, "enqueue_ns");
	op->start_ns = u64(o, "start_ns");
	op->end_ns = u64(o, "end_ns");
	op->correlation_id = (uint32_t)u64(o, "correlation_id");
	op->thread_id = (uint32_t)u64(o, "thread_id");
	op->api_domain =
		!strcmp(str(o, "api"), "driver") ? SIMGPU_DOMAIN_DRIVER : SIMGPU_DOMAIN_RUNTIME;
	op->hidden = flag(o, "hidden");
	op->async = flag(o, "async");
	op->graph_id = (uint32_t)u64(o, "graph_id");
	op->graph_node_id = u64(o, "graph_node_id");
	op->bytes = u64(o, "bytes");
	op->copy_kind = copy_kind(str(o, "copy_kind"));
	op->src_kind = mem_kind(str(o, "src_kind"));
	op->dst_kind = mem_kind(str(o, "dst_kind"));
	op->memset_value = (uint32_t)u64(o, "value");
	op->peer_device = field(o, "peer_device") ? (int32_t)u64(o, "peer_device") : -1;
	triple(o, "grid", op->grid);
	triple(o, "block", op->block);
	op->dynamic_smem = (uint32_t)u64(o, "dynamic_smem");
	op->static_smem = (uint32_t)u64(o, "static_smem");
	op->registers = (uint32_t)u64(o, "registers");
	op->launch_seq = u64(o, "launch_seq");
	return 0;
}

static int read_api(yajl_val o, struct simgpu_truth_api *a)
{
	memset(a, 0, sizeof(*a));
	a->name = strdup(str(o, "name"));
	if (!a->name) {
		return -ENOMEM;
	}
	a->domain =
		!strcmp(str(o, "domain"), "driver") ? SIMGPU_DOMAIN_DRIVER : SIMGPU_DOMAIN_RUNTIME;
	a->hidden = flag(o, "hidden");
	a->cbid = (uint32_t)u64(o, "cbid");
	a->correlation_id = (uint32_t)u64(o, "correlation_id");
	a->thread_id = (uint32_t)u64(o, "thread_id");
	a->result = (int)u64(o, "result");
	a->start_ns = u64(o, "start_ns");
	a->end_ns = u64(o, "end_ns");
	a->blocked_from_ns = u64(o, "blocked_from_ns");
	a->blocked_to_ns = u64(o, "blocked_to_ns");
	return 0;
}

static void read_mem(yajl_val o, struct simgpu_truth_mem *m)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->what, sizeof(m->what), "%s", str(o, "what"));
	m->address = strtoull(str(o, "address"), NULL, 16);
	m->bytes = u64(o, "bytes");
	m->time_ns = u64(o, "time_ns");
	m->thread_id = (uint32_t)u64(o, "thread_id");
	m->kind = mem_kind(str(o, "kind"));
	m->device = (int)u64(o, "device");
}

static yajl_val array(yajl_val root, const char *key, size_t *n)
{
	yajl_val v = field(root, key);

	*n = v && YAJL_IS_ARRAY(v) ? v->u.array.len : 0;
	return v;
}

static int fill(struct simgpu_truth *t, yajl_val root)
{
	yajl_val ops = array(root, "ops", &t->n_ops);
	yajl_val api = array(root, "api", &t->n_api);
	yajl_val mem = array(root, "memory", &t->n_mem);
	yajl_val devices = field(root, "devices");
	yajl_val dropped = field(root, "dropped");
	size_t i;

	t->pid = (int)u64(root, "pid");
	t->device_count = devices && YAJL_IS_ARRAY(devices) ? (int)devices->u.array.len : 0;
	t->ops = calloc(t->n_ops + 1, sizeof(*t->ops));
	t->api = calloc(t->n_api + 1, sizeof(*t->api));
	t->mem = calloc(t->n_mem + 1, sizeof(*t->mem));
	if (!t->ops || !t->api || !t->mem) {
		return -ENOMEM;
	}
	for (i = 0; i < t->n_ops; i++) {
		if (read_op(ops->u.array.values[i], &t->ops[i]) < 0) {
			return -ENOMEM;
		}
	}
	for (i = 0; i < t->n_api; i++) {
		if (read_api(api->u.array.values[i], &t->api[i]) < 0) {
			return -ENOMEM;
		}
	}
	for (i = 0; i < t->n_mem; i++) {
		read_mem(mem->u.array.values[i], &t->mem[i]);
	}
	if (dropped) {
		t->dropped_ops = u64(dropped, "ops");
		t->dropped_api = u64(dropped, "api");
		t->dropped_mem = u64(dropped, "memory");
	}
	return 0;
}

int simgpu_truth_create(const char *path, struct simgpu_truth **out, char *err, size_t err_len)
{
	char parse_error[256] = "";
	struct simgpu_truth *t;
	yajl_val root;
	int error = 0;
	char *text;

	*out = NULL;
	text = slurp(path, &error);
	if (!text) {
		fail(err, err_len, "%s: %s", path, strerror(-error));
		return error;
	}
	root = yajl_tree_parse(text, parse_error, sizeof(parse_error));
	free(text);
	if (!root || !YAJL_IS_OBJECT(root) || u64(root, "simgpu_truth") != 1) {
		fail(err, err_len, "%s: not a simgpu ground truth (version 1): %s", path,
		     root ? "missing \"simgpu_truth\": 1" : parse_error);
		yajl_tree_free(root);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	error = t ? fill(t, root) : -ENOMEM;
	yajl_tree_free(root);
	if (error) {
		fail(err, err_len, "%s: out of memory", path);
		simgpu_truth_destroy(t);
		return error;
	}
	*out = t;
	return 0;
}

void simgpu_truth_destroy(struct simgpu_truth *t)
{
	size_t i;

	if (!t) {
		return;
	}
	for (i = 0; t->ops && i < t->n_ops; i++) {
		free((char *)t->ops[i].name);
	}
	for (i = 0; t->api && i < t->n_api; i++) {
		free(t->api[i].name);
	}
	free(t->ops);
	free(t->api);
	free(t->mem);
	free(t);
}

size_t simgpu_truth_count_correlated(const struct simgpu_truth *t, uint32_t type,
				     uint32_t correlation_id)
{
	size_t i;
	size_t n = 0;

	for (i = 0; i < t->n_ops; i++) {
		n += t->ops[i].correlation_id == correlation_id &&
		     (!type || t->ops[i].type == type);
	}
	return n;
}

static int by_start(const void *a, const void *b)
{
	const struct simgpu_op *x = *(const struct simgpu_op *const *)a;
	const struct simgpu_op *y = *(const struct simgpu_op *const *)b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

uint64_t simgpu_truth_busy_ns(const struct simgpu_truth *t, uint32_t type, uint64_t *first,
			      uint64_t *last)
{
	const struct simgpu_op **sel = calloc(t->n_ops + 1, sizeof(*sel));
	uint64_t busy = 0;
	uint64_t cur_start = 0;
	uint64_t cur_end = 0;
	size_t n = 0;
	size_t i;

	if (!sel) {
		return 0;
	}
	for (i = 0; i < t->n_ops; i++) {
		if (!type || t->ops[i].type == type) {
			sel[n++] = &t->ops[i];
		}
	}
	qsort(sel, n, sizeof(*sel), by_start);
	for (i = 0; i < n; i++) {
		if (i == 0 || sel[i]->start_ns > cur_end) {
			busy += cur_end - cur_start;
			cur_start = sel[i]->start_ns;
			cur_end = sel[i]->end_ns;
		} else if (sel[i]->end_ns > cur_end) {
			cur_end = sel[i]->end_ns;
		}
		if (last && (i == 0 || sel[i]->end_ns > *last)) {
			*last = sel[i]->end_ns;
		}
	}
	busy += cur_end - cur_start;
	if (first) {
		*first = n ? sel[0]->start_ns : 0;
	}
	if (last && !n) {
		*last = 0;
	}
	free(sel);
	return busy;
}

const struct simgpu_truth_api *simgpu_truth_api_by_correlation(const struct simgpu_truth *t,
							       uint32_t correlation_id)
{
	size_t i;

	for (i = 0; i < t->n_api; i++) {
		if (t->api[i].correlation_id == correlation_id) {
			return &t->api[i];
		}
	}
	return NULL;
}
