/* SPDX-License-Identifier: MIT */
/*
 * The CUDA family's records on their own: what encode-cuda.c writes for each kind
 * (through the real spill -> JSON path), a torn launch record, and the theoretical
 * occupancy of gpu-devices.h against values worked out by hand.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "format/encode.h"
#include "preload/gpu/gpu-devices.h"
#include "preload/core/intern.h"
#include "tests/common/isc-test.h"
#include "format/spill.h"
#include "format/convert.h"

static char *dir;

static void setup(void)
{
	dir = isc_test_tmpdir();
	cr_assert_eq(isc_intern_init(1 << 20, 1 << 12), 0);
}

static void teardown(void)
{
	isc_test_rmrf(dir);
	free(dir);
}

TestSuite(records, .init = setup, .fini = teardown);

static struct isc_event head(unsigned kind, const char *name, uint64_t ts, uint64_t dur)
{
	struct isc_event e;
	memset(&e, 0, sizeof(e));
	e.ts = ts;
	e.dur = dur;
	e.tid = 77;
	e.kind = (uint16_t)kind;
	e.name = name ? isc_intern_cstr(name) : 0;
	return e;
}

/* Writes recs as one event block of a spill, converts it, returns the trace. */
static yajl_val convert(const struct isc_event *recs, uint32_t n, struct isc_convert_result *res)
{
	char spill[4200], json[4200];
	struct isc_spill s;
	uint64_t from = ISC_INTERN_FIRST;
	struct isc_spill_events h = { 77, n };
	snprintf(spill, sizeof(spill), "%s/t.spill", dir);
	snprintf(json, sizeof(json), "%s/t.json", dir);
	cr_assert_eq(isc_spill_create(&s, spill, 42, 1000), 0);
	uint64_t pub = isc_intern_published();
	isc_spill_queue(&s, ISC_BLK_META, "{\"pid\":42}", 10, NULL, 0);
	isc_spill_queue(&s, ISC_BLK_STRINGS, &from, 8, isc_intern_arena() + from, pub - from);
	isc_spill_queue(&s, ISC_BLK_EVENTS, &h, sizeof(h), recs, n * sizeof(*recs));
	cr_assert_eq(isc_spill_sync(&s), 0);
	isc_spill_close(&s);
	int in = open(spill, O_RDONLY), out = open(json, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_eq(isc_trace_convert(in, out, NULL, res), 0);
	close(in);
	close(out);
	yajl_val t = isc_test_load_json(json);
	cr_assert_not_null(t);
	return t;
}

Test(records, every_cuda_kind_is_encoded)
{
	struct isc_event r[10];
	struct isc_convert_result res;
	r[0] = head(ISC_EV_CUDA_API, "cudaLaunchKernel", 1000000, 3000);
	r[0].aux = 1 | ISC_API_LAUNCH; /* device 0 */
	r[0].flags = ISC_EVF_ASYNC;
	r[0].u.cuda_api = (struct isc_cuda_api_payload){ 5, 0, 0, 2, 0 };
	r[1] = head(ISC_EV_EXT, NULL, 0, 0);
	r[1].u.launch = (struct isc_launch_payload){
		isc_intern_cstr("_Z4gemmPf"), { 8, 4, 1 }, { 256, 1, 1 }, 1024
	};
	r[2] = head(ISC_EV_CUDA_API, "cudaMemcpy", 1010000, 50000);
	r[2].aux = 2 | ISC_DIR_H2D << ISC_API_DIR_SHIFT | ISC_MEM_PINNED << ISC_API_HOSTMEM_SHIFT |
		   ISC_API_HAS_BYTES;
	r[2].flags = ISC_EVF_BLOCKED;
	r[2].u.cuda_api = (struct isc_cuda_api_payload){ 6, 1 << 20, 0, ISC_STREAM_NONE, 0 };
	r[3] = head(ISC_EV_CUDA_API, "cuLaunchKernel", 1020000, 2000);
	r[3].flags = ISC_EVF_CUPTI;
	r[3].u.cuda_api =
		(struct isc_cuda_api_payload){ ISC_CUPTI_CORR_BASE + 9, 0, 0, ISC_STREAM_NONE, 0 };
	r[4] = head(ISC_EV_GPU_KERNEL, "_Z4gemmPf", 1005000, 40000);
	r[4].u.gpu_kernel = (struct isc_gpu_kernel_payload){ 5, 0, 7, 1, 0, 64, 5000 };
	r[5] = head(ISC_EV_EXT, NULL, 0, 0);
	r[5].u.gpu_kernel_ext =
		(struct isc_kernel_ext_payload){ { 8, 4, 1 }, { 256, 1, 1 }, 2048, 1024 };
	r[6] = head(ISC_EV_GPU_MEMCPY, NULL, 1060000, 40000);
	r[6].aux = 1;
	r[6].u.gpu_copy = (struct isc_gpu_memcpy_payload){
		6, 1 << 20, 7, 0, ISC_DIR_D2H, ISC_MEM_DEVICE, ISC_MEM_PAGEABLE, 0, 0, 0
	};
	r[7] = head(ISC_EV_GPU_MEMCPY, NULL, 1110000, 10000);
	r[7].u.gpu_copy = (struct isc_gpu_memcpy_payload){
		8, 4096, 7, 0, ISC_DIR_P2P, ISC_MEM_DEVICE, ISC_MEM_DEVICE, 0, 0, 1
	};
	r[8] = head(ISC_EV_GPU_MEMSET, NULL, 1130000, 1000);
	r[8].u.gpu_memset = (struct isc_gpu_memset_payload){ 10, 1000, 7, 0xff, 0, ISC_MEM_DEVICE };
	r[9] = head(ISC_EV_GPU_SYNC, NULL, 1140000, 9000);
	r[9].aux = 1;
	r[9].u.gpu_sync =
		(struct isc_gpu_sync_payload){ 11, ISC_STREAM_NONE, ISC_SYNC_CONTEXT, 0, 1, 0 };
	yajl_val t = convert(r, 10, &res);
	cr_assert_eq(res.skipped, 0);
	cr_assert_eq(res.events, 8, "two records are continuations");

	yajl_val e = isc_trace_find(t, "cuda_api", "cudaLaunchKernel", 0);
	cr_assert_str_eq(isc_trace_str(e, "metadata/kernel"), "_Z4gemmPf");
	cr_assert_eq(isc_trace_int(e, "metadata/shared_memory_bytes", -1), 1024);
	cr_assert_eq(isc_trace_int(e, "metadata/stream_id", -1), 2);
	cr_assert_eq(isc_trace_int(e, "metadata/device_id", -1), 0);
	cr_assert_str_eq(isc_trace_str(e, "metadata/source"), "interposer");
	cr_assert(YAJL_IS_TRUE(isc_trace_get(e, "metadata/async")));
	e = isc_trace_find(t, "cuda_api", "cudaMemcpy", 0);
	cr_assert_str_eq(isc_trace_str(e, "metadata/direction"), "h2d");
	cr_assert_str_eq(isc_trace_str(e, "metadata/host_memory"), "pinned");
	cr_assert(YAJL_IS_TRUE(isc_trace_get(e, "metadata/blocked")));
	cr_assert_null(isc_trace_get(e, "metadata/stream_id"), "a call without stream");
	e = isc_trace_find(t, "cuda_api", "cuLaunchKernel", 0);
	cr_assert_str_eq(isc_trace_str(e, "metadata/source"), "cupti");
	cr_assert_eq(isc_trace_int(e, "metadata/correlation_id", -1), (1ll << 48) + 9);

	e = isc_trace_find(t, "gpu_kernel", "_Z4gemmPf", 0);
	cr_assert_eq(isc_trace_int(e, "metadata/shared_memory_bytes", -1), 3072);
	cr_assert_eq(isc_trace_int(e, "metadata/registers_per_thread", -1), 64);
	cr_assert_float_eq(isc_trace_num(e, "metadata/occupancy", -1), 0.5, 1e-9);
	e = isc_trace_find(t, "d2h_copy", "Memcpy DtoH (Device -> Pageable)", 0);
	cr_assert_not_null(e);
	cr_assert_str_eq(isc_trace_str(e, "metadata/kind"), "pageable");
	cr_assert_float_eq(isc_trace_num(e, "metadata/throughput_gbps", -1), 26.214, 1e-3);
	e = isc_trace_find(t, "d2d_copy", NULL, 0);
	cr_assert(YAJL_IS_TRUE(isc_trace_get(e, "metadata/peer")));
	cr_assert_eq(isc_trace_int(e, "metadata/dst_device_id", -1), 1);
	e = isc_trace_find(t, "gpu_memset", "Memset (Device)", 0);
	cr_assert_eq(isc_trace_int(e, "metadata/value", -1), 0xff);
	e = isc_trace_find(t, "gpu_sync", "Context Sync", 0);
	cr_assert_str_eq(isc_trace_str(e, "metadata/sync_type"), "context");
	cr_assert_eq(isc_trace_int(e, "metadata/device_id", -1), 0);
	cr_assert_null(isc_trace_get(e, "metadata/stream_id"));
	yajl_tree_free(t);
}

Test(records, a_launch_torn_from_its_configuration)
{
	struct isc_event r[1];
	struct isc_convert_result res;
	r[0] = head(ISC_EV_CUDA_API, "cudaLaunchKernel", 1000000, 3000);
	r[0].aux = ISC_API_LAUNCH; /* its EXT record never made it into the spill */
	r[0].u.cuda_api = (struct isc_cuda_api_payload){ 5, 0, 0, 0, 0 };
	yajl_val t = convert(r, 1, &res);
	cr_assert_eq(res.events, 1, "the call is still written");
	cr_assert_eq(res.skipped, 1, "and the missing part counted");
	cr_assert_null(isc_trace_get(isc_trace_find(t, "cuda_api", NULL, 0), "metadata/grid_dim"));
	yajl_tree_free(t);
}

/* Graph nodes (created, cloned) and the node id of replayed copies and memsets, which
 * travels in an EXT record; a copy whose EXT was torn away is written without it. */
Test(records, graph_nodes_and_the_node_of_replayed_copies)
{
	struct isc_event r[7];
	struct isc_convert_result res;
	r[0] = head(ISC_EV_GRAPH_NODE, "cudaLaunchKernel", 1000000, 0);
	r[0].u.graph_node = (struct isc_graph_node_payload){ 11, 0, 5, 3, 0 };
	r[1] = head(ISC_EV_GRAPH_NODE, "cudaGraphInstantiate", 1001000, 0);
	r[1].aux = ISC_NODE_CLONED;
	r[1].u.graph_node = (struct isc_graph_node_payload){ 1ull << 40, 11, 6, 3, 1 };
	r[2] = head(ISC_EV_GPU_MEMCPY, NULL, 1010000, 2000);
	r[2].flags = ISC_EVF_NODE_EXT;
	r[2].u.gpu_copy = (struct isc_gpu_memcpy_payload){
		7, 4096, 7, 3, ISC_DIR_D2D, ISC_MEM_DEVICE, ISC_MEM_DEVICE, 0, 0, 0
	};
	r[3] = head(ISC_EV_EXT, NULL, 0, 0);
	r[3].u.gpu_node_ext.graph_node_id = 1ull << 40;
	r[4] = head(ISC_EV_GPU_MEMSET, NULL, 1020000, 1000);
	r[4].flags = ISC_EVF_NODE_EXT;
	r[4].u.gpu_memset = (struct isc_gpu_memset_payload){ 7, 64, 7, 0, 3, ISC_MEM_DEVICE };
	r[5] = head(ISC_EV_EXT, NULL, 0, 0);
	r[5].u.gpu_node_ext.graph_node_id = 12;
	r[6] = head(ISC_EV_GPU_MEMSET, NULL, 1030000, 1000);
	r[6].flags = ISC_EVF_NODE_EXT; /* its EXT never made it into the spill */
	r[6].u.gpu_memset = (struct isc_gpu_memset_payload){ 7, 64, 7, 0, 3, ISC_MEM_DEVICE };
	yajl_val t = convert(r, 7, &res);
	cr_assert_eq(res.events, 5);
	cr_assert_eq(res.skipped, 1, "the torn memset's node");

	yajl_val e = isc_trace_find(t, "cuda_graph_node", "cudaLaunchKernel", 0);
	cr_assert_str_eq(isc_trace_str(e, "metadata/operation"), "created");
	cr_assert_eq(isc_trace_int(e, "metadata/graph_node_id", -1), 11);
	cr_assert_eq(isc_trace_int(e, "metadata/graph_id", -1), 3);
	cr_assert_eq(isc_trace_int(e, "metadata/correlation_id", -1), 5);
	cr_assert_str_eq(isc_trace_str(e, "metadata/kind"), "kernel");
	cr_assert_null(isc_trace_get(e, "metadata/original_node_id"));
	e = isc_trace_find(t, "cuda_graph_node", "cudaGraphInstantiate", 0);
	cr_assert_str_eq(isc_trace_str(e, "metadata/operation"), "cloned");
	cr_assert_eq(isc_trace_int(e, "metadata/graph_node_id", -1), 1ll << 40);
	cr_assert_eq(isc_trace_int(e, "metadata/original_node_id", -1), 11);
	cr_assert_str_eq(isc_trace_str(e, "metadata/kind"), "memcpy");
	e = isc_trace_find(t, "d2d_copy", NULL, 0);
	cr_assert_eq(isc_trace_int(e, "metadata/graph_id", -1), 3);
	cr_assert_eq(isc_trace_int(e, "metadata/graph_node_id", -1), 1ll << 40);
	cr_assert_eq(isc_trace_int(isc_trace_find(t, "gpu_memset", NULL, 0),
				   "metadata/graph_node_id", -1),
		     12);
	cr_assert_null(
		isc_trace_get(isc_trace_find(t, "gpu_memset", NULL, 1), "metadata/graph_node_id"));
	yajl_tree_free(t);
}

/* An H100 as CUPTI describes it: 64 warps, 32 blocks, 64 K registers, 228 KiB per SM. */
static const struct isc_gpu_device h100 = {
	.cc_major = 9,
	.max_warps_per_sm = 64,
	.max_blocks_per_sm = 32,
	.max_registers_per_sm = 65536,
	.max_shared_per_sm = 233472,
	.warp_size = 32,
};

Test(records, theoretical_occupancy)
{
	/* threads, registers, shared bytes -> occupancy in 1/10000 */
	cr_assert_eq(isc_gpu_occupancy(&h100, 256, 32, 0), 10000, "8 blocks of 8 warps");
	cr_assert_eq(isc_gpu_occupancy(&h100, 256, 64, 0), 5000, "registers: 32 warps");
	cr_assert_eq(isc_gpu_occupancy(&h100, 64, 255, 0), 1250, "8 KiB registers per warp");
	cr_assert_eq(isc_gpu_occupancy(&h100, 1024, 32, 48 * 1024), 10000, "2 blocks fit");
	cr_assert_eq(isc_gpu_occupancy(&h100, 128, 32, 100 * 1024), 1250, "shared: 2 blocks");
	cr_assert_eq(isc_gpu_occupancy(&h100, 32, 16, 0), 5000, "32 blocks of one warp");
	cr_assert_eq(isc_gpu_occupancy(&h100, 100, 32, 0), 10000, "100 threads are 4 warps");
	cr_assert_eq(isc_gpu_occupancy(NULL, 256, 32, 0), ISC_OCCUPANCY_UNKNOWN);
	cr_assert_eq(isc_gpu_occupancy(&h100, 4096, 32, 0), 0, "more warps than an SM has");
}
