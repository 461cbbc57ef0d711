/* SPDX-License-Identifier: MIT */
/*
 * Encoders of the CUDA family: cuda_api (intercepted or CUPTI-only calls), gpu_kernel,
 * the copies (h2d_copy, d2h_copy, d2d_copy, h2h_copy), gpu_memset and gpu_sync. Pure
 * functions of the records, as the writer also runs in inferscope-analyze.
 */
#include "format/encode.h"
#include "format/vocab.h"

#include <string.h>

static const char *const mem_short[] = { "Unknown", "Pageable", "Pinned",
					 "Device",  "Managed",	"Array" };

/* Appends s to buf at *n (no snprintf: this also runs in a dying process). */
static void put(char *buf, size_t cap, size_t *n, const char *s)
{
	size_t len = strlen(s);
	if (*n + len >= cap) {
		len = cap - 1 - *n;
	}
	memcpy(buf + *n, s, len);
	*n += len;
	buf[*n] = '\0';
}

static const char *mem_name(unsigned k)
{
	return k < isc_copy_kind_count ? isc_copy_kind_names[k] : isc_copy_kind_names[0];
}

static void dim3_json(struct isc_json *j, const char *key, const uint32_t v[3])
{
	isc_json_key(j, key);
	isc_json_begin_array(j);
	for (int i = 0; i < 3; i++) {
		isc_json_uint(j, v[i]);
	}
	isc_json_end_array(j);
}

static void stream_json(struct isc_json *j, uint32_t stream)
{
	if (stream != ISC_STREAM_NONE) {
		isc_json_kv_uint(j, ISC_KEY_STREAM_ID, stream);
	}
}

static const char *dir_name(unsigned d)
{
	static const char *const names[] = { NULL, "h2d", "d2h", "d2d", "h2h", "default", "peer" };
	return d < 7 ? names[d] : NULL;
}

/* The launch configuration after a launch's cuda_api record; 1 when consumed. */
static unsigned launch_json(struct isc_enc *e, const struct isc_event *x, unsigned avail)
{
	if (avail < 2 || x->kind != ISC_EV_EXT) {
		e->skipped++;
		return 0;
	}
	const struct isc_launch_payload *l = &x->u.launch;
	if (l->kernel) {
		isc_enc_kv_name(e, "kernel", l->kernel);
	}
	dim3_json(e->j, "grid_dim", l->grid);
	dim3_json(e->j, "block_dim", l->block);
	isc_json_kv_uint(e->j, ISC_KEY_SHARED_MEMORY_BYTES, l->shared_bytes);
	return 1;
}

unsigned isc_encode_cuda_api(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_cuda_api_payload *p = &r->u.cuda_api;
	struct isc_json *j = e->j;
	unsigned used = 1;
	const char *dir = dir_name(r->aux >> ISC_API_DIR_SHIFT & 7);
	unsigned host = r->aux >> ISC_API_HOSTMEM_SHIFT & 7;

	isc_enc_begin(e, ISC_TYPE_CUDA_API, r->name, r);
	isc_json_kv_uint(j, ISC_KEY_CORRELATION_ID, p->correlation_id);
	if (r->aux & 0xff) {
		isc_json_kv_uint(j, ISC_KEY_DEVICE_ID, (r->aux & 0xff) - 1);
	}
	stream_json(j, p->stream_id);
	isc_json_kv_int(j, ISC_KEY_RETURN_CODE, p->result);
	isc_json_kv_bool(j, ISC_KEY_BLOCKED, (r->flags & ISC_EVF_BLOCKED) != 0);
	isc_json_kv_bool(j, ISC_KEY_ASYNC, (r->flags & ISC_EVF_ASYNC) != 0);
	if (r->aux & ISC_API_HAS_BYTES) {
		isc_json_kv_uint(j, ISC_KEY_BYTES, p->bytes);
	}
	if (dir) {
		isc_json_kv_string(j, ISC_KEY_DIRECTION, dir);
	}
	if (host == ISC_MEM_PAGEABLE || host == ISC_MEM_PINNED) {
		isc_json_kv_string(j, ISC_KEY_HOST_MEMORY, mem_name(host));
	}
	if (r->aux & ISC_API_HAS_PTR) {
		isc_json_key(j, ISC_KEY_PTR);
		isc_json_hex(j, p->ptr);
	}
	if (r->aux & ISC_API_LAUNCH) {
		used += launch_json(e, r + 1, avail);
	}
	if (r->aux & ISC_API_STACK && used < avail) {
		used += isc_encode_stack_block(e, r + used, avail - used, 0);
	}
	isc_json_kv_string(j, ISC_KEY_SOURCE, (r->flags & ISC_EVF_CUPTI) ? "cupti" : "interposer");
	isc_enc_end(e);
	return used;
}

/* The common GPU fields: correlation, device, stream. */
static void gpu_common(struct isc_json *j, uint64_t corr, uint32_t device, uint32_t stream)
{
	isc_json_kv_uint(j, ISC_KEY_CORRELATION_ID, corr);
	isc_json_kv_uint(j, ISC_KEY_DEVICE_ID, device);
	stream_json(j, stream);
}

unsigned isc_encode_gpu_kernel(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_gpu_kernel_payload *p = &r->u.gpu_kernel;
	struct isc_json *j = e->j;
	bool ext = avail >= 2 && r[1].kind == ISC_EV_EXT;

	isc_enc_begin(e, ISC_TYPE_GPU_KERNEL, r->name, r);
	gpu_common(j, p->correlation_id, r->aux, p->stream_id);
	isc_json_kv_uint(j, ISC_KEY_CONTEXT_ID, p->context_id);
	if (ext) {
		const struct isc_kernel_ext_payload *x = &r[1].u.gpu_kernel_ext;
		dim3_json(j, "grid_dim", x->grid);
		dim3_json(j, "block_dim", x->block);
		isc_json_kv_uint(j, ISC_KEY_SHARED_MEMORY_BYTES,
				 (uint64_t)x->static_shared + x->dynamic_shared);
		isc_json_kv_uint(j, ISC_KEY_STATIC_SHARED_MEMORY_BYTES, x->static_shared);
		isc_json_kv_uint(j, ISC_KEY_DYNAMIC_SHARED_MEMORY_BYTES, x->dynamic_shared);
	} else {
		e->skipped++;
	}
	isc_json_kv_uint(j, ISC_KEY_REGISTERS_PER_THREAD, p->registers);
	if (p->occupancy != ISC_OCCUPANCY_UNKNOWN) {
		isc_json_kv_double(j, ISC_KEY_OCCUPANCY, p->occupancy / 10000.0, 4);
	}
	if (p->graph_id) {
		isc_json_kv_uint(j, ISC_KEY_GRAPH_ID, p->graph_id);
		isc_json_kv_uint(j, ISC_KEY_GRAPH_NODE_ID, p->graph_node_id);
	}
	isc_enc_end(e);
	return ext ? 2 : 1;
}

static void throughput_json(struct isc_json *j, uint64_t bytes, uint64_t dur_ns)
{
	if (dur_ns > 0) {
		/* bytes per nanosecond are gigabytes (10^9) per second */
		isc_json_kv_double(j, ISC_KEY_THROUGHPUT_GBPS, (double)bytes / (double)dur_ns, 3);
	}
}

/* A copy's or memset's graph and node (the node in the EXT record of ISC_EVF_NODE_EXT);
 * returns the continuation records consumed. */
static unsigned graph_json(struct isc_enc *e, const struct isc_event *r, unsigned avail,
			   uint32_t graph_id)
{
	bool ext = (r->flags & ISC_EVF_NODE_EXT) && avail >= 2 && r[1].kind == ISC_EV_EXT;
	if (graph_id) {
		isc_json_kv_uint(e->j, ISC_KEY_GRAPH_ID, graph_id);
	}
	if (ext && r[1].u.gpu_node_ext.graph_node_id) {
		isc_json_kv_uint(e->j, ISC_KEY_GRAPH_NODE_ID, r[1].u.gpu_node_ext.graph_node_id);
	}
	if ((r->flags & ISC_EVF_NODE_EXT) && !ext) {
		e->skipped++; /* torn: the continuation is not there */
	}
	return ext ? 1 : 0;
}

static const char *copy_type(unsigned dir)
{
	switch (dir) {
	case ISC_DIR_H2D:
		return "h2d_copy";
	case ISC_DIR_D2H:
		return "d2h_copy";
	case ISC_DIR_H2H:
		return "h2h_copy";
	default:
		return "d2d_copy";
	}
}

unsigned isc_encode_gpu_memcpy(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	static const char *const abbrev[] = { "?", "HtoD", "DtoH", "DtoD", "HtoH", "?", "PtoP" };
	const struct isc_gpu_memcpy_payload *p = &r->u.gpu_copy;
	struct isc_json *j = e->j;
	char name[64];
	unsigned dir = p->dir < 7 ? p->dir : 0;
	unsigned src = p->src_kind < 6 ? p->src_kind : 0, dst = p->dst_kind < 6 ? p->dst_kind : 0;

	/* Kineto's spelling, which users of the PyTorch profiler know */
	size_t n = 0;
	const char *parts[] = { "Memcpy ", abbrev[dir],	   " (", mem_short[src],
				" -> ",	   mem_short[dst], ")" };
	for (unsigned i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		put(name, sizeof(name), &n, parts[i]);
	}
	isc_enc_begin_named(e, copy_type(dir), name, n, r);
	gpu_common(j, p->correlation_id, r->aux, p->stream_id);
	isc_json_kv_uint(j, ISC_KEY_BYTES, p->bytes);
	unsigned kind = dir == ISC_DIR_D2H ? dst
			: (dir == ISC_DIR_H2D || dir == ISC_DIR_H2H)
				? src
				: (src != ISC_MEM_DEVICE ? src : dst);
	isc_json_kv_string(j, ISC_KEY_KIND, mem_name(kind));
	throughput_json(j, p->bytes, r->dur);
	isc_json_kv_bool(j, ISC_KEY_ASYNC, (r->flags & ISC_EVF_ASYNC) != 0);
	if (dir == ISC_DIR_P2P) {
		isc_json_kv_bool(j, ISC_KEY_PEER, true);
		isc_json_kv_uint(j, ISC_KEY_SRC_DEVICE_ID, p->src_device);
		isc_json_kv_uint(j, ISC_KEY_DST_DEVICE_ID, p->dst_device);
	}
	unsigned used = 1 + graph_json(e, r, avail, p->graph_id);
	isc_enc_end(e);
	return used;
}

unsigned isc_encode_gpu_memset(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_gpu_memset_payload *p = &r->u.gpu_memset;
	struct isc_json *j = e->j;
	char name[48];
	unsigned k = p->mem_kind < 6 ? p->mem_kind : 0;

	size_t n = 0;
	put(name, sizeof(name), &n, "Memset (");
	put(name, sizeof(name), &n, mem_short[k]);
	put(name, sizeof(name), &n, ")");
	isc_enc_begin_named(e, ISC_TYPE_GPU_MEMSET, name, n, r);
	gpu_common(j, p->correlation_id, r->aux, p->stream_id);
	isc_json_kv_uint(j, ISC_KEY_BYTES, p->bytes);
	isc_json_kv_uint(j, ISC_KEY_VALUE, p->value);
	isc_json_kv_string(j, ISC_KEY_KIND, mem_name(k));
	throughput_json(j, p->bytes, r->dur);
	unsigned used = 1 + graph_json(e, r, avail, p->graph_id);
	isc_enc_end(e);
	return used;
}

unsigned isc_encode_gpu_sync(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	static const char *const names[] = { "Sync", "Event Sync", "Stream Wait Event",
					     "Stream Sync", "Context Sync" };
	const struct isc_gpu_sync_payload *p = &r->u.gpu_sync;
	struct isc_json *j = e->j;
	unsigned t = p->sync_type < isc_sync_type_count ? p->sync_type : 0;
	(void)avail;

	isc_enc_begin_named(e, ISC_TYPE_GPU_SYNC, names[t], strlen(names[t]), r);
	isc_json_kv_uint(j, ISC_KEY_CORRELATION_ID, p->correlation_id);
	if (r->aux) {
		isc_json_kv_uint(j, ISC_KEY_DEVICE_ID, r->aux - 1);
	}
	stream_json(j, p->stream_id);
	isc_json_kv_string(j, ISC_KEY_SYNC_TYPE, isc_sync_type_names[t]);
	if (p->event_id != 0xffffffffu && t == ISC_SYNC_EVENT) {
		isc_json_kv_uint(j, ISC_KEY_EVENT_ID, p->event_id);
	}
	isc_enc_end(e);
	return 1;
}

unsigned isc_encode_graph_node(struct isc_enc *e, const struct isc_event *r, unsigned avail)
{
	const struct isc_graph_node_payload *p = &r->u.graph_node;
	struct isc_json *j = e->j;
	bool cloned = (r->aux & ISC_NODE_CLONED) != 0;
	unsigned kind = p->node_type < isc_graph_node_kind_count
				? p->node_type
				: (unsigned)isc_graph_node_kind_count - 1;
	unsigned used = 1;

	isc_enc_begin(e, ISC_TYPE_CUDA_GRAPH_NODE, r->name, r);
	isc_json_kv_string(j, ISC_KEY_OPERATION, cloned ? ISC_NODE_OP_CLONED : ISC_NODE_OP_CREATED);
	isc_json_kv_uint(j, ISC_KEY_GRAPH_NODE_ID, p->node_id);
	if (cloned) {
		isc_json_kv_uint(j, ISC_KEY_ORIGINAL_NODE_ID, p->original_id);
	}
	if (p->graph_id) {
		isc_json_kv_uint(j, ISC_KEY_GRAPH_ID, p->graph_id);
	}
	isc_json_kv_string(j, ISC_KEY_KIND, isc_graph_node_kind_names[kind]);
	if (p->correlation_id) {
		isc_json_kv_uint(j, ISC_KEY_CORRELATION_ID, p->correlation_id);
	}
	if ((r->aux & ISC_NODE_STACK) && avail > 1) {
		used += isc_encode_stack_block(e, r + 1, avail - 1, 0);
	}
	isc_enc_end(e);
	return used;
}
