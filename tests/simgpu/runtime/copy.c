/* SPDX-License-Identifier: MIT */
/*
 * Copies and memsets: the bandwidth model and the host-blocking rules of the real
 * runtime ("API synchronization behavior" in the CUDA runtime documentation):
 *   - duration = SIMGPU_COPY_LATENCY_NS + bytes / bandwidth, the bandwidth chosen
 *     by direction and by whether the host side is pageable or pinned;
 *   - host-to-device copies use one copy engine, device-to-host ones another;
 *   - cudaMemcpy blocks the host until a copy that touches host memory is done;
 *     device-to-device and peer copies do not block;
 *   - cudaMemcpyAsync from or to pageable memory blocks too (the runtime stages
 *     it through a pinned buffer), only pinned copies are truly asynchronous;
 *   - cudaMemset is asynchronous unless its target is pinned host memory.
 * Explicit copy kinds are checked against the pointers: a "device" pointer that
 * no allocation contains is cudaErrorInvalidValue.
 */
#include "tests/simgpu/runtime/sim.h"

uint64_t isc_sim_copy_duration(uint8_t copy_kind, uint8_t host_kind, uint64_t bytes)
{
	const struct isc_sim_config *cfg = &isc_sim_cfg;
	bool pageable = host_kind == SIMGPU_MEM_PAGEABLE;
	double bw;

	switch (copy_kind) {
	case SIMGPU_COPY_HTOD:
		bw = pageable ? cfg->bw_h2d_pageable : cfg->bw_h2d_pinned;
		break;
	case SIMGPU_COPY_DTOH:
		bw = pageable ? cfg->bw_d2h_pageable : cfg->bw_d2h_pinned;
		break;
	case SIMGPU_COPY_PTOP:
		bw = cfg->bw_p2p;
		break;
	case SIMGPU_COPY_HTOH:
		bw = cfg->bw_h2h;
		break;
	default:
		bw = cfg->bw_d2d;
		break;
	}
	return cfg->copy_latency_ns + (uint64_t)((double)bytes / bw);
}

static bool on_device(uint8_t kind)
{
	return kind == SIMGPU_MEM_DEVICE || kind == SIMGPU_MEM_MANAGED;
}

/* Fills the copy kind and memory kinds of @p op. Caller holds the lock. */
static cudaError_t classify(const struct isc_sim_copy *cp, struct simgpu_op *op)
{
	int src_dev;
	int dst_dev;
	bool src_d;
	bool dst_d;

	op->src_kind = isc_sim_mem_kind(cp->src, &src_dev);
	op->dst_kind = isc_sim_mem_kind(cp->dst, &dst_dev);
	src_d = op->src_kind == SIMGPU_MEM_DEVICE;
	dst_d = op->dst_kind == SIMGPU_MEM_DEVICE;
	switch (cp->kind) {
	case cudaMemcpyHostToDevice:
		src_d = false;
		dst_d = true;
		break;
	case cudaMemcpyDeviceToHost:
		src_d = true;
		dst_d = false;
		break;
	case cudaMemcpyDeviceToDevice:
		src_d = dst_d = true;
		break;
	case cudaMemcpyHostToHost:
		src_d = dst_d = false;
		break;
	case cudaMemcpyDefault:
		break;
	default:
		return cudaErrorInvalidMemcpyDirection;
	}
	if ((src_d && !on_device(op->src_kind)) || (dst_d && !on_device(op->dst_kind)) ||
	    (!src_d && op->src_kind == SIMGPU_MEM_DEVICE) ||
	    (!dst_d && op->dst_kind == SIMGPU_MEM_DEVICE)) {
		return cudaErrorInvalidValue;
	}
	op->copy_kind = src_d && dst_d ? SIMGPU_COPY_DTOD
			: src_d	       ? SIMGPU_COPY_DTOH
			: dst_d	       ? SIMGPU_COPY_HTOD
				       : SIMGPU_COPY_HTOH;
	op->device = dst_d ? dst_dev : src_d ? src_dev : isc_sim_current_device();
	return cudaSuccess;
}

/* Copies naming a device symbol: the symbol's host shadow stands for device memory. */
static cudaError_t classify_symbol(const struct isc_sim_copy *cp, struct simgpu_op *op,
				   bool to_symbol)
{
	const void *host = to_symbol ? cp->src : cp->dst;
	uint8_t host_kind = isc_sim_mem_kind(host, NULL);

	op->device = isc_sim_current_device();
	if (host_kind == SIMGPU_MEM_DEVICE) {
		op->copy_kind = SIMGPU_COPY_DTOD;
		op->src_kind = op->dst_kind = SIMGPU_MEM_DEVICE;
	} else if (to_symbol) {
		op->copy_kind = SIMGPU_COPY_HTOD;
		op->src_kind = host_kind;
		op->dst_kind = SIMGPU_MEM_DEVICE;
	} else {
		op->copy_kind = SIMGPU_COPY_DTOH;
		op->src_kind = SIMGPU_MEM_DEVICE;
		op->dst_kind = host_kind;
	}
	return cudaSuccess;
}

static enum isc_sim_engine engine_of(uint8_t copy_kind)
{
	return copy_kind == SIMGPU_COPY_HTOD   ? SIM_ENGINE_H2D
	       : copy_kind == SIMGPU_COPY_DTOH ? SIM_ENGINE_D2H
					       : SIM_ENGINE_NONE;
}

/* Whether the calling thread waits for the copy to finish (see the top of the file). */
static bool blocks_host(const struct simgpu_op *op, unsigned mode)
{
	if (op->copy_kind == SIMGPU_COPY_DTOD || op->copy_kind == SIMGPU_COPY_PTOP) {
		return false;
	}
	if (!(mode & SIM_COPY_ASYNC) || op->copy_kind == SIMGPU_COPY_HTOH) {
		return true;
	}
	return (op->copy_kind == SIMGPU_COPY_HTOD && op->src_kind == SIMGPU_MEM_PAGEABLE) ||
	       (op->copy_kind == SIMGPU_COPY_DTOH && op->dst_kind == SIMGPU_MEM_PAGEABLE);
}

static void fill_op(struct simgpu_op *op, const struct isc_sim_call *c, uint32_t type,
		    uint64_t bytes, unsigned mode)
{
	op->type = type;
	op->correlation_id = c->api.correlation_id;
	op->name = "";
	op->peer_device = -1;
	op->thread_id = c->api.thread_id;
	op->bytes = bytes;
	op->async = (mode & SIM_COPY_ASYNC) != 0;
	op->api_domain = c->api.domain;
	op->hidden = c->api.hidden;
}

/*
 * Puts @p op on stream @p handle (or into the graph it is capturing) and returns
 * when the host may continue.
 */
static cudaError_t enqueue(struct isc_sim_call *c, struct simgpu_op *op, cudaStream_t handle,
			   unsigned mode, uint64_t duration, bool block)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;
	bool blocking_sync;

	isc_sim_busy_wait(isc_sim_cfg.api_cost_ns);
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(handle, (mode & SIM_COPY_PTSZ) != 0, &err);
	if (!s) {
		pthread_mutex_unlock(&isc_sim_lock);
		return err;
	}
	op->stream_id = s->id;
	op->device = s->device;
	op->enqueue_ns = isc_sim_now();
	if (s->capture) {
		struct simgpu_graph_node created;
		bool added = isc_sim_capture_add(s, op, duration, &created);

		pthread_mutex_unlock(&isc_sim_lock);
		if (added) {
			isc_sim_notify_graph_node(&created);
		}
		return cudaSuccess;
	}
	op->end_ns = isc_sim_schedule(s, engine_of(op->copy_kind),
				      op->enqueue_ns + isc_sim_cfg.launch_latency_ns, duration,
				      &op->start_ns);
	isc_sim_truth_op(op);
	blocking_sync = isc_sim_device_blocking_sync(s->device);
	pthread_mutex_unlock(&isc_sim_lock);
	isc_sim_notify_op(op);
	if (block) {
		isc_sim_block(c, op->end_ns, !blocking_sync);
	}
	return cudaSuccess;
}

cudaError_t isc_sim_copy(struct isc_sim_call *c, const struct isc_sim_copy *cp, cudaStream_t stream,
			 unsigned mode)
{
	struct simgpu_op op = { 0 };
	uint64_t duration;
	uint8_t host_kind;
	cudaError_t err;

	if (cp->bytes == 0 || cp->rows == 0) {
		return cudaSuccess;
	}
	if (!cp->dst || !cp->src) {
		return cudaErrorInvalidValue;
	}
	fill_op(&op, c, SIMGPU_OP_MEMCPY, (uint64_t)cp->bytes * cp->rows, mode);
	pthread_mutex_lock(&isc_sim_lock);
	err = classify(cp, &op);
	pthread_mutex_unlock(&isc_sim_lock);
	if (err != cudaSuccess) {
		return err;
	}
	if (cp->dst_device >= 0 && cp->src_device >= 0 && cp->dst_device != cp->src_device) {
		op.copy_kind = SIMGPU_COPY_PTOP;
		op.peer_device = cp->dst_device;
	}
	host_kind = op.copy_kind == SIMGPU_COPY_DTOH ? op.dst_kind : op.src_kind;
	duration = isc_sim_copy_duration(op.copy_kind, host_kind, op.bytes);
	return enqueue(c, &op, stream, mode, duration, blocks_host(&op, mode));
}

cudaError_t isc_sim_symbol_copy(struct isc_sim_call *c, const struct isc_sim_copy *cp,
				cudaStream_t stream, unsigned mode, bool to_symbol)
{
	struct simgpu_op op = { 0 };
	uint64_t duration;
	uint8_t host_kind;

	if (cp->bytes == 0) {
		return cudaSuccess;
	}
	if (!cp->dst || !cp->src) {
		return cudaErrorInvalidSymbol;
	}
	fill_op(&op, c, SIMGPU_OP_MEMCPY, cp->bytes, mode);
	pthread_mutex_lock(&isc_sim_lock);
	classify_symbol(cp, &op, to_symbol);
	pthread_mutex_unlock(&isc_sim_lock);
	host_kind = to_symbol ? op.src_kind : op.dst_kind;
	duration = isc_sim_copy_duration(op.copy_kind, host_kind, op.bytes);
	return enqueue(c, &op, stream, mode, duration, blocks_host(&op, mode));
}

cudaError_t isc_sim_memset(struct isc_sim_call *c, void *dst, int value, size_t bytes,
			   cudaStream_t stream, unsigned mode)
{
	struct simgpu_op op = { 0 };
	uint64_t duration;
	uint8_t kind;

	if (bytes == 0) {
		return cudaSuccess;
	}
	pthread_mutex_lock(&isc_sim_lock);
	kind = isc_sim_mem_kind(dst, NULL);
	pthread_mutex_unlock(&isc_sim_lock);
	if (kind == SIMGPU_MEM_PAGEABLE) {
		return cudaErrorInvalidValue;
	}
	fill_op(&op, c, SIMGPU_OP_MEMSET, bytes, mode);
	op.dst_kind = kind;
	op.memset_value = (uint32_t)value & 0xffu;
	duration = isc_sim_cfg.copy_latency_ns + (uint64_t)((double)bytes / isc_sim_cfg.bw_memset);
	return enqueue(c, &op, stream, mode, duration,
		       !(mode & SIM_COPY_ASYNC) && kind == SIMGPU_MEM_PINNED);
}
