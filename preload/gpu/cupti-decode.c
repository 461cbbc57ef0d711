/* SPDX-License-Identifier: MIT */
/*
 * CUPTI 13 activity records -> our records. The record structures are the ones of
 * the headers this library is built with; cupti.c refuses a libcupti of another
 * major, whose records would have another layout. Names are interned here, while
 * CUPTI's strings are still valid (only during the buffer callback).
 */
#include <cupti.h>
#include <stdatomic.h>
#include <string.h>

#include "preload/gpu/cupti-internal.h"
#include "preload/gpu/gpu-devices.h"
#include "preload/core/intern.h"

#define MAX_CONTEXTS 4096
static _Atomic uint16_t context_device[MAX_CONTEXTS]; /* device + 1 */

static void note_context(uint32_t context, uint32_t device)
{
	if (context < MAX_CONTEXTS && device < 0xffff) {
		atomic_store_explicit(&context_device[context], (uint16_t)(device + 1),
				      memory_order_relaxed);
	}
}

int isc_cupti_context_device(uint32_t context)
{
	if (context >= MAX_CONTEXTS) {
		return -1;
	}
	return (int)atomic_load_explicit(&context_device[context], memory_order_relaxed) - 1;
}

static uint8_t mem_kind(uint32_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
		return ISC_MEM_PAGEABLE;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
		return ISC_MEM_PINNED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
		return ISC_MEM_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
		return ISC_MEM_ARRAY;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
		return ISC_MEM_MANAGED;
	default:
		return ISC_MEM_UNKNOWN;
	}
}

static uint8_t copy_dir(uint32_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return ISC_DIR_H2D;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return ISC_DIR_D2H;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return ISC_DIR_D2D;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return ISC_DIR_H2H;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return ISC_DIR_P2P;
	default:
		return ISC_DIR_NONE;
	}
}

/* The header of a GPU record; the caller fills the payload. A record with neither start
 * nor end is one a forced flush handed over while the activity was still in flight:
 * CUPTI zeroes its timestamps and never delivers it again. */
static void head(struct isc_staged *s, struct isc_event *e, unsigned kind, uint64_t start,
		 uint64_t end)
{
	s->incomplete = start == 0 && end == 0;
	memset(e, 0, sizeof(*e));
	e->ts = isc_cupti_time(start);
	uint64_t stop = isc_cupti_time(end);
	e->dur = stop > e->ts ? stop - e->ts : 0;
	e->kind = (uint16_t)kind;
}

static void kernel(const CUpti_ActivityKernel10 *k, struct isc_staged *s)
{
	struct isc_event *e = &s->ev[0], *x = &s->ev[1];
	head(s, e, ISC_EV_GPU_KERNEL, k->start, k->end);
	e->name = k->name ? isc_intern_cstr(k->name) : 0;
	e->aux = k->deviceId;
	e->u.gpu_kernel.graph_node_id = k->graphNodeId;
	e->u.gpu_kernel.stream_id = k->streamId;
	e->u.gpu_kernel.context_id = k->contextId;
	e->u.gpu_kernel.graph_id = k->graphId;
	e->u.gpu_kernel.registers = k->registersPerThread;
	e->u.gpu_kernel.occupancy = ISC_OCCUPANCY_UNKNOWN;
	memset(x, 0, sizeof(*x));
	x->kind = ISC_EV_EXT;
	x->u.gpu_kernel_ext.grid[0] = (uint32_t)k->gridX;
	x->u.gpu_kernel_ext.grid[1] = (uint32_t)k->gridY;
	x->u.gpu_kernel_ext.grid[2] = (uint32_t)k->gridZ;
	x->u.gpu_kernel_ext.block[0] = (uint32_t)k->blockX;
	x->u.gpu_kernel_ext.block[1] = (uint32_t)k->blockY;
	x->u.gpu_kernel_ext.block[2] = (uint32_t)k->blockZ;
	x->u.gpu_kernel_ext.static_shared = (uint32_t)k->staticSharedMemory;
	x->u.gpu_kernel_ext.dynamic_shared = (uint32_t)k->dynamicSharedMemory;
	s->cc = k->correlationId;
	s->n = 2;
	s->kernel = 1;
	note_context(k->contextId, k->deviceId);
}

/* A copy or memset replayed from a graph: its node id goes in an EXT record (record.h). */
static void node_ext(struct isc_staged *s, uint64_t node)
{
	if (node == 0) {
		return;
	}
	struct isc_event *x = &s->ev[1];
	memset(x, 0, sizeof(*x));
	x->kind = ISC_EV_EXT;
	x->u.gpu_node_ext.graph_node_id = node;
	s->ev[0].flags |= ISC_EVF_NODE_EXT;
	s->n = 2;
}

static void copy(const CUpti_ActivityMemcpy6 *m, struct isc_staged *s)
{
	struct isc_event *e = &s->ev[0];
	head(s, e, ISC_EV_GPU_MEMCPY, m->start, m->end);
	e->aux = m->deviceId;
	e->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? ISC_EVF_ASYNC : 0;
	e->u.gpu_copy.bytes = m->bytes;
	e->u.gpu_copy.stream_id = m->streamId;
	e->u.gpu_copy.graph_id = m->graphId;
	e->u.gpu_copy.dir = copy_dir(m->copyKind);
	e->u.gpu_copy.src_kind = mem_kind(m->srcKind);
	e->u.gpu_copy.dst_kind = mem_kind(m->dstKind);
	s->cc = m->correlationId;
	s->n = 1;
	node_ext(s, m->graphNodeId);
	note_context(m->contextId, m->deviceId);
}

static void peer_copy(const CUpti_ActivityMemcpyPtoP4 *m, struct isc_staged *s)
{
	struct isc_event *e = &s->ev[0];
	head(s, e, ISC_EV_GPU_MEMCPY, m->start, m->end);
	e->aux = m->deviceId;
	e->flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? ISC_EVF_ASYNC : 0;
	e->u.gpu_copy.bytes = m->bytes;
	e->u.gpu_copy.stream_id = m->streamId;
	e->u.gpu_copy.graph_id = m->graphId;
	e->u.gpu_copy.dir = m->srcDeviceId != m->dstDeviceId ? ISC_DIR_P2P : ISC_DIR_D2D;
	e->u.gpu_copy.src_kind = mem_kind(m->srcKind);
	e->u.gpu_copy.dst_kind = mem_kind(m->dstKind);
	e->u.gpu_copy.src_device = (uint16_t)m->srcDeviceId;
	e->u.gpu_copy.dst_device = (uint16_t)m->dstDeviceId;
	s->cc = m->correlationId;
	s->n = 1;
	node_ext(s, m->graphNodeId);
}

static void memset_(const CUpti_ActivityMemset4 *m, struct isc_staged *s)
{
	struct isc_event *e = &s->ev[0];
	head(s, e, ISC_EV_GPU_MEMSET, m->start, m->end);
	e->aux = m->deviceId;
	e->u.gpu_memset.bytes = m->bytes;
	e->u.gpu_memset.stream_id = m->streamId;
	e->u.gpu_memset.value = m->value;
	e->u.gpu_memset.graph_id = m->graphId;
	e->u.gpu_memset.mem_kind = mem_kind(m->memoryKind);
	s->cc = m->correlationId;
	s->n = 1;
	node_ext(s, m->graphNodeId);
	note_context(m->contextId, m->deviceId);
}

static void sync(const CUpti_ActivitySynchronization2 *y, struct isc_staged *s)
{
	struct isc_event *e = &s->ev[0];
	head(s, e, ISC_EV_GPU_SYNC, y->start, y->end);
	int dev = y->contextId != CUPTI_SYNCHRONIZATION_INVALID_VALUE
			  ? isc_cupti_context_device(y->contextId)
			  : -1;
	e->aux = dev >= 0 ? (uint32_t)dev + 1 : 0;
	e->u.gpu_sync.stream_id = y->streamId; /* 0xffffffff: not about a stream */
	e->u.gpu_sync.sync_type = (uint32_t)y->type <= ISC_SYNC_CONTEXT ? (uint32_t)y->type : 0;
	e->u.gpu_sync.event_id = y->cudaEventId;
	e->u.gpu_sync.context_id = y->contextId;
	s->cc = y->correlationId;
	s->n = 1;
}

bool isc_cupti_decode_gpu(const CUpti_Activity *rec, struct isc_staged *out)
{
	out->kernel = 0;
	out->resolved = 0;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		kernel((const CUpti_ActivityKernel10 *)rec, out);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		copy((const CUpti_ActivityMemcpy6 *)rec, out);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		peer_copy((const CUpti_ActivityMemcpyPtoP4 *)rec, out);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		memset_((const CUpti_ActivityMemset4 *)rec, out);
		return true;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		sync((const CUpti_ActivitySynchronization2 *)rec, out);
		return true;
	default:
		return false;
	}
}

void isc_cupti_decode_device(const CUpti_Activity *rec)
{
	const CUpti_ActivityDevice5 *d = (const CUpti_ActivityDevice5 *)rec;
	struct isc_gpu_device g = {
		.id = d->id,
		.name = d->name ? isc_intern_cstr(d->name) : 0,
		.sm_count = d->numMultiprocessors,
		.cc_major = d->computeCapabilityMajor,
		.cc_minor = d->computeCapabilityMinor,
		.max_warps_per_sm = d->maxWarpsPerMultiprocessor,
		.max_blocks_per_sm = d->maxBlocksPerMultiprocessor,
		.max_registers_per_sm = d->maxRegistersPerMultiprocessor,
		.max_shared_per_sm = d->maxSharedMemoryPerMultiprocessor,
		.registers_per_block = d->maxRegistersPerBlock,
		.shared_per_block = d->maxSharedMemoryPerBlock,
		.warp_size = d->numThreadsPerWarp,
		.global_memory = d->globalMemorySize,
	};
	isc_gpu_device_add(&g);
}
