/* SPDX-License-Identifier: MIT */
/*
 * Activity records in the toolkit's own structures, built from what the runtime
 * reports. Correlation ids are the runtime's: a kernel, copy or memset carries
 * the id of the API call that issued it (a graph's operations the id of its
 * launch), and a memcpy's runtimeCorrelationId equals its correlationId, since
 * the simulated runtime issues no nested driver calls.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/simgpu/cupti/cupti-sim.h"

#define CONTEXT_ID(device) ((uint32_t)(device) + 1)

uint32_t isc_cupti_thread_id(uint32_t tid, uint64_t pthread_id)
{
	return isc_cupti.tid_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? tid
									  : (uint32_t)pthread_id;
}

void isc_cupti_record_api(const struct simgpu_api *call)
{
	union isc_cupti_record rec;
	CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_RUNTIME;

	if (call->domain == SIMGPU_DOMAIN_DRIVER) {
		kind = CUPTI_ACTIVITY_KIND_DRIVER;
	}
	if (!isc_cupti_enabled(kind)) {
		return;
	}
	memset(&rec, 0, sizeof(rec));
	rec.api.kind = kind;
	rec.api.cbid = call->cbid;
	rec.api.start = call->tool_start;
	rec.api.end = call->tool_end;
	rec.api.processId = (uint32_t)getpid();
	rec.api.threadId = isc_cupti_thread_id(call->thread_id, call->pthread_id);
	rec.api.correlationId = call->correlation_id;
	rec.api.returnValue = (uint32_t)call->result;
	/* external ids precede the API record they belong to, as in real CUPTI */
	pthread_mutex_lock(&isc_cupti.lock);
	isc_cupti_record_external(call->correlation_id);
	isc_cupti_put(&rec, 0);
	pthread_mutex_unlock(&isc_cupti.lock);
}

static void kernel_record(union isc_cupti_record *rec, const struct simgpu_op *op)
{
	CUpti_ActivityKernel10 *k = &rec->kernel;

	k->kind = isc_cupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			  ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
			  : CUPTI_ACTIVITY_KIND_KERNEL;
	k->registersPerThread = (uint16_t)op->registers;
	k->start = isc_cupti_ts(op->start_ns);
	k->end = isc_cupti_ts(op->end_ns);
	k->completed = k->end;
	k->deviceId = (uint32_t)op->device;
	k->contextId = CONTEXT_ID(op->device);
	k->streamId = op->stream_id;
	k->gridX = (int32_t)op->grid[0];
	k->gridY = (int32_t)op->grid[1];
	k->gridZ = (int32_t)op->grid[2];
	k->blockX = (int32_t)op->block[0];
	k->blockY = (int32_t)op->block[1];
	k->blockZ = (int32_t)op->block[2];
	k->staticSharedMemory = (int32_t)op->static_smem;
	k->dynamicSharedMemory = (int32_t)op->dynamic_smem;
	k->correlationId = op->correlation_id;
	k->gridId = (int64_t)op->launch_seq;
	k->name = op->name;
	k->launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	k->sharedMemoryExecuted = op->static_smem + op->dynamic_smem;
	k->graphId = op->graph_id;
	k->graphNodeId = op->graph_node_id;
	k->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	if (isc_cupti.latency_timestamps) {
		k->queued = isc_cupti_ts(op->enqueue_ns);
		k->submitted = isc_cupti_ts(op->enqueue_ns);
	}
}

static void memcpy_record(union isc_cupti_record *rec, const struct simgpu_op *op)
{
	CUpti_ActivityMemcpy6 *m = &rec->memcpy;

	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = op->copy_kind;
	m->srcKind = op->src_kind;
	m->dstKind = op->dst_kind;
	m->flags = op->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m->bytes = op->bytes;
	m->start = isc_cupti_ts(op->start_ns);
	m->end = isc_cupti_ts(op->end_ns);
	m->deviceId = (uint32_t)op->device;
	m->contextId = CONTEXT_ID(op->device);
	m->streamId = op->stream_id;
	m->correlationId = op->correlation_id;
	m->runtimeCorrelationId = op->correlation_id;
	m->graphId = op->graph_id;
	m->graphNodeId = op->graph_node_id;
	m->channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
	m->copyCount = 1;
}

static void peer_record(union isc_cupti_record *rec, const struct simgpu_op *op)
{
	CUpti_ActivityMemcpyPtoP4 *p = &rec->peer;

	p->kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	p->flags = op->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	p->bytes = op->bytes;
	p->start = isc_cupti_ts(op->start_ns);
	p->end = isc_cupti_ts(op->end_ns);
	p->deviceId = (uint32_t)op->device;
	p->contextId = CONTEXT_ID(op->device);
	p->streamId = op->stream_id;
	p->srcDeviceId = (uint32_t)op->device;
	p->srcContextId = CONTEXT_ID(op->device);
	p->dstDeviceId = (uint32_t)op->peer_device;
	p->dstContextId = CONTEXT_ID(op->peer_device);
	p->correlationId = op->correlation_id;
	p->graphId = op->graph_id;
	p->graphNodeId = op->graph_node_id;
	p->channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
}

static void memset_record(union isc_cupti_record *rec, const struct simgpu_op *op)
{
	CUpti_ActivityMemset4 *m = &rec->memset;

	m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m->value = op->memset_value;
	m->bytes = op->bytes;
	m->start = isc_cupti_ts(op->start_ns);
	m->end = isc_cupti_ts(op->end_ns);
	m->deviceId = (uint32_t)op->device;
	m->contextId = CONTEXT_ID(op->device);
	m->streamId = op->stream_id;
	m->correlationId = op->correlation_id;
	m->flags = op->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
	m->memoryKind = op->dst_kind;
	m->graphId = op->graph_id;
	m->graphNodeId = op->graph_node_id;
	m->channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
}

/* The record waits in the pending heap until the device has finished the operation. */
void isc_cupti_record_op(const struct simgpu_op *op)
{
	union isc_cupti_record rec;
	bool peer = op->copy_kind == SIMGPU_COPY_PTOP;

	memset(&rec, 0, sizeof(rec));
	if (op->type == SIMGPU_OP_KERNEL &&
	    (isc_cupti_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ||
	     isc_cupti_enabled(CUPTI_ACTIVITY_KIND_KERNEL))) {
		kernel_record(&rec, op);
	} else if (op->type == SIMGPU_OP_MEMCPY && peer &&
		   isc_cupti_enabled(CUPTI_ACTIVITY_KIND_MEMCPY2)) {
		peer_record(&rec, op);
	} else if (op->type == SIMGPU_OP_MEMCPY && isc_cupti_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
		memcpy_record(&rec, op);
	} else if (op->type == SIMGPU_OP_MEMSET && isc_cupti_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) {
		memset_record(&rec, op);
	} else {
		return;
	}
	isc_cupti_put(&rec, op->end_ns);
}

void isc_cupti_record_sync(const struct simgpu_sync *sync)
{
	union isc_cupti_record rec;
	CUpti_ActivitySynchronization2 *s = &rec.sync;

	if (!isc_cupti_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
		return;
	}
	memset(&rec, 0, sizeof(rec));
	s->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s->type = (CUpti_ActivitySynchronizationType)sync->type;
	s->start = isc_cupti_ts(sync->start_ns);
	s->end = isc_cupti_ts(sync->end_ns);
	s->correlationId = sync->correlation_id;
	s->contextId = CONTEXT_ID(sync->device);
	s->streamId = sync->stream_id ? sync->stream_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	s->cudaEventId = sync->event_id ? sync->event_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	s->returnValue = (uint32_t)sync->result;
	isc_cupti_put(&rec, 0);
}

static void device_record(union isc_cupti_record *rec, int id, const struct cudaDeviceProp *p)
{
	CUpti_ActivityDevice5 *d = &rec->device;

	d->kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d->globalMemoryBandwidth = 3352000000ull; /* KB/s */
	d->globalMemorySize = p->totalGlobalMem;
	d->constantMemorySize = (uint32_t)p->totalConstMem;
	d->l2CacheSize = (uint32_t)p->l2CacheSize;
	d->numThreadsPerWarp = (uint32_t)p->warpSize;
	d->coreClockRate = 1980000;
	d->numMemcpyEngines = (uint32_t)p->asyncEngineCount;
	d->numMultiprocessors = (uint32_t)p->multiProcessorCount;
	d->maxIPC = 4;
	d->maxWarpsPerMultiprocessor = (uint32_t)p->maxThreadsPerMultiProcessor / 32;
	d->maxBlocksPerMultiprocessor = (uint32_t)p->maxBlocksPerMultiProcessor;
	d->maxSharedMemoryPerMultiprocessor = (uint32_t)p->sharedMemPerMultiprocessor;
	d->maxRegistersPerMultiprocessor = (uint32_t)p->regsPerMultiprocessor;
	d->maxRegistersPerBlock = (uint32_t)p->regsPerBlock;
	d->maxSharedMemoryPerBlock = (uint32_t)p->sharedMemPerBlock;
	d->maxThreadsPerBlock = (uint32_t)p->maxThreadsPerBlock;
	d->maxBlockDimX = (uint32_t)p->maxThreadsDim[0];
	d->maxBlockDimY = (uint32_t)p->maxThreadsDim[1];
	d->maxBlockDimZ = (uint32_t)p->maxThreadsDim[2];
	d->maxGridDimX = (uint32_t)p->maxGridSize[0];
	d->maxGridDimY = (uint32_t)p->maxGridSize[1];
	d->maxGridDimZ = (uint32_t)p->maxGridSize[2];
	d->computeCapabilityMajor = (uint32_t)p->major;
	d->computeCapabilityMinor = (uint32_t)p->minor;
	d->id = (uint32_t)id;
	d->eccEnabled = (uint32_t)p->ECCEnabled;
	memcpy(&d->uuid, &p->uuid, sizeof(d->uuid));
	d->name = strdup(p->name); /* lives as long as the process, like CUPTI's */
	d->isCudaVisible = 1;
	d->numaId = (uint32_t)-1;
}

/* One DEVICE record per device, once the runtime has devices and the kind is on. */
void isc_cupti_record_devices(void)
{
	const struct simgpu_runtime *rt = isc_cupti.rt;
	struct cudaDeviceProp props;
	union isc_cupti_record rec;
	int n;
	int i;

	if (!rt || !rt->initialised() || !isc_cupti_enabled(CUPTI_ACTIVITY_KIND_DEVICE)) {
		return;
	}
	n = rt->device_count();
	for (i = 0; i < n && i < 32; i++) {
		pthread_mutex_lock(&isc_cupti.lock);
		if (isc_cupti.devices_emitted & (1u << i) || rt->device_props(i, &props) < 0) {
			pthread_mutex_unlock(&isc_cupti.lock);
			continue;
		}
		isc_cupti.devices_emitted |= 1u << i;
		memset(&rec, 0, sizeof(rec));
		device_record(&rec, i, &props);
		isc_cupti_put(&rec, 0);
		pthread_mutex_unlock(&isc_cupti.lock);
	}
}

void isc_cupti_record_overhead(CUpti_ActivityOverheadKind kind, uint64_t start_mono,
			       uint64_t end_mono)
{
	union isc_cupti_record rec;
	CUpti_ActivityOverhead3 *o = &rec.overhead;

	if (!isc_cupti_enabled(CUPTI_ACTIVITY_KIND_OVERHEAD)) {
		return;
	}
	memset(&rec, 0, sizeof(rec));
	o->kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o->overheadKind = kind;
	o->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o->objectId.pt.processId = (uint32_t)getpid();
	o->objectId.pt.threadId = isc_cupti_thread_id((uint32_t)gettid(), (uint64_t)pthread_self());
	o->start = isc_cupti_ts(start_mono);
	o->end = isc_cupti_ts(end_mono);
	isc_cupti_put(&rec, 0);
}
