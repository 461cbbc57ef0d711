/* SPDX-License-Identifier: MIT */
/*
 * Stream capture: between cudaStreamBeginCapture and cudaStreamEndCapture, the kernels,
 * copies and memsets issued to the stream become nodes of a new graph (graph.c) instead
 * of running. Only single-stream captures are modelled: events recorded or awaited while
 * capturing are ignored, so cross-stream (fork/join) captures record the capturing
 * stream's work only.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "tests/simgpu/runtime/sim.h"

static _Atomic unsigned long long next_capture_id = 1;

cudaError_t isc_sim_begin_capture(cudaStream_t stream, enum cudaStreamCaptureMode mode, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;
	struct CUgraph_st *g;

	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && s->legacy) {
		err = cudaErrorStreamCaptureUnsupported;
	} else if (s && s->capture) {
		err = cudaErrorIllegalState;
	} else if (s) {
		g = isc_sim_graph_new();
		if (!g) {
			err = cudaErrorMemoryAllocation;
		} else {
			s->capture = g;
			s->capture_id = atomic_fetch_add(&next_capture_id, 1);
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

cudaError_t isc_sim_end_capture(cudaStream_t stream, cudaGraph_t *graph, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;

	if (!graph) {
		return cudaErrorInvalidValue;
	}
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s && !s->capture) {
		err = cudaErrorIllegalState;
	} else if (s) {
		*graph = s->capture;
		s->capture = NULL;
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

cudaError_t isc_sim_is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
				 unsigned long long *id, cudaGraph_t *graph, bool ptsz)
{
	cudaError_t err = cudaSuccess;
	struct CUstream_st *s;

	if (!status) {
		return cudaErrorInvalidValue;
	}
	pthread_mutex_lock(&isc_sim_lock);
	s = isc_sim_stream_resolve(stream, ptsz, &err);
	if (s) {
		*status = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
		if (id) {
			*id = s->capture ? s->capture_id : 0;
		}
		if (graph) {
			*graph = s->capture;
		}
	}
	pthread_mutex_unlock(&isc_sim_lock);
	return err;
}

SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamBeginCapture_v10000),
					"cudaStreamBeginCapture", 0);

	if (err == cudaSuccess) {
		err = isc_sim_begin_capture(stream, mode, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	struct isc_sim_call c;
	cudaError_t err =
		isc_sim_enter(&c, SIM_CBID(cudaStreamEndCapture_v10000), "cudaStreamEndCapture", 0);

	if (err == cudaSuccess) {
		err = isc_sim_end_capture(stream, pGraph, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
					     enum cudaStreamCaptureStatus *pCaptureStatus)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamIsCapturing_v10000),
					"cudaStreamIsCapturing", 0);

	if (err == cudaSuccess) {
		err = isc_sim_is_capturing(stream, pCaptureStatus, NULL, NULL, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
						enum cudaStreamCaptureStatus *captureStatus_out,
						unsigned long long *id_out, cudaGraph_t *graph_out,
						const cudaGraphNode_t **dependencies_out,
						const cudaGraphEdgeData **edgeData_out,
						size_t *numDependencies_out)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaStreamGetCaptureInfo_v12030),
					"cudaStreamGetCaptureInfo", 0);

	if (dependencies_out) {
		*dependencies_out = NULL;
	}
	if (edgeData_out) {
		*edgeData_out = NULL;
	}
	if (numDependencies_out) {
		*numDependencies_out = 0;
	}
	if (err == cudaSuccess) {
		err = isc_sim_is_capturing(stream, captureStatus_out, id_out, graph_out, false);
	}
	return isc_sim_leave(&c, err);
}

SIM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	struct isc_sim_call c;
	cudaError_t err = isc_sim_enter(&c, SIM_CBID(cudaThreadExchangeStreamCaptureMode_v10010),
					"cudaThreadExchangeStreamCaptureMode", 0);

	if (err == cudaSuccess && !mode) {
		err = cudaErrorInvalidValue;
	}
	return isc_sim_leave(&c, err);
}
