/* SPDX-License-Identifier: MIT */
/*
 * The Python workloads' way to the GPU: a small shared library that links
 * libcudart.so.13 and is loaded with ctypes, as framework extension modules are
 * (a ctypes call straight into libcudart would bypass every interposer, which is
 * not how real Python programs reach CUDA). Resources live in small tables and
 * are named by index. Functions return 0 or a cudaError_t; allocators return an
 * index, or minus a cudaError_t.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#include "tests/simgpu/simgpu.h"
#include "tests/workloads/python/wlext.h"

#define SLOTS 64

static char kernel_keys[SLOTS];
static int n_kernels;
static cudaStream_t streams[SLOTS];
static int n_streams = 1; /* 0 is the legacy default stream */
static void *host_bufs[SLOTS];
static int n_host;
static void *dev_bufs[SLOTS];
static cudaEvent_t events[SLOTS];
static int n_events;

const char *wlx_error_name(int err)
{
	return cudaGetErrorName((cudaError_t)err);
}

const char *wlx_error_string(int err)
{
	return cudaGetErrorString((cudaError_t)err);
}

int wlx_init(void)
{
	int count = 0;

	return (int)cudaGetDeviceCount(&count);
}

/* Registers a kernel's simulated duration; returns its index. */
int wlx_kernel(const char *name, unsigned long long duration_ns)
{
	typedef int (*register_fn)(const void *, const char *, uint64_t);
	register_fn reg = (register_fn)simgpu_lookup("simgpu_kernel_register");

	if (n_kernels == SLOTS) {
		return -(int)cudaErrorInvalidValue;
	}
	if (reg) {
		reg(&kernel_keys[n_kernels], name, duration_ns);
	}
	return n_kernels++;
}

int wlx_stream_create(int non_blocking)
{
	cudaError_t err;

	if (n_streams == SLOTS) {
		return -(int)cudaErrorInvalidValue;
	}
	err = cudaStreamCreateWithFlags(&streams[n_streams],
					non_blocking ? cudaStreamNonBlocking : cudaStreamDefault);
	return err ? -(int)err : n_streams++;
}

int wlx_launch(int kernel, unsigned grid, unsigned block, int stream)
{
	dim3 g = { grid, 1, 1 };
	dim3 b = { block, 1, 1 };

	if (kernel < 0 || kernel >= n_kernels || stream < 0 || stream >= n_streams) {
		return (int)cudaErrorInvalidValue;
	}
	return (int)cudaLaunchKernel(&kernel_keys[kernel], g, b, NULL, 0, streams[stream]);
}

int wlx_host_alloc(size_t bytes, int pinned)
{
	cudaError_t err = cudaSuccess;

	if (n_host == SLOTS) {
		return -(int)cudaErrorInvalidValue;
	}
	if (pinned) {
		err = cudaMallocHost(&host_bufs[n_host], bytes);
	} else {
		host_bufs[n_host] = calloc(1, bytes);
		err = host_bufs[n_host] ? cudaSuccess : cudaErrorMemoryAllocation;
	}
	return err ? -(int)err : n_host++;
}

int wlx_device_alloc(size_t bytes)
{
	int i;

	for (i = 0; i < SLOTS; i++) {
		if (!dev_bufs[i]) {
			cudaError_t err = cudaMalloc(&dev_bufs[i], bytes);

			return err ? -(int)err : i;
		}
	}
	return -(int)cudaErrorInvalidValue;
}

int wlx_device_free(int buf)
{
	cudaError_t err;

	if (buf < 0 || buf >= SLOTS || !dev_bufs[buf]) {
		return (int)cudaErrorInvalidValue;
	}
	err = cudaFree(dev_bufs[buf]);
	dev_bufs[buf] = NULL;
	return (int)err;
}

/* direction 0: host to device, 1: device to host. */
int wlx_copy(int direction, int host, int dev, size_t bytes, int async, int stream)
{
	void *h;
	void *d;

	if (host < 0 || host >= n_host || dev < 0 || dev >= SLOTS || !dev_bufs[dev] || stream < 0 ||
	    stream >= n_streams) {
		return (int)cudaErrorInvalidValue;
	}
	h = host_bufs[host];
	d = dev_bufs[dev];
	if (async) {
		cudaStream_t s = streams[stream];

		return direction ? cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s)
				 : cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s);
	}
	return direction ? cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost)
			 : cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
}

int wlx_stream_sync(int stream)
{
	if (stream < 0 || stream >= n_streams) {
		return (int)cudaErrorInvalidValue;
	}
	return (int)cudaStreamSynchronize(streams[stream]);
}

int wlx_device_sync(void)
{
	return (int)cudaDeviceSynchronize();
}

int wlx_event_create(void)
{
	cudaError_t err;

	if (n_events == SLOTS) {
		return -(int)cudaErrorInvalidValue;
	}
	err = cudaEventCreateWithFlags(&events[n_events], cudaEventDisableTiming);
	return err ? -(int)err : n_events++;
}

int wlx_event_record(int event, int stream)
{
	if (event < 0 || event >= n_events || stream < 0 || stream >= n_streams) {
		return (int)cudaErrorInvalidValue;
	}
	return (int)cudaEventRecord(events[event], streams[stream]);
}

int wlx_event_sync(int event)
{
	if (event < 0 || event >= n_events) {
		return (int)cudaErrorInvalidValue;
	}
	return (int)cudaEventSynchronize(events[event]);
}
