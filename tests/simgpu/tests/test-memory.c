/* SPDX-License-Identifier: MIT */
/*
 * Copies, memsets and allocations: the bandwidth model (pageable slower than
 * pinned, both directions, device-to-device much faster), which calls block the
 * host (read from the ground truth's blocked intervals, not from a clock), and
 * what the memory API reports about pointers.
 */
#include <string.h>

#include "tests/simgpu/tests/sim-test.h"

#define MIB (1u << 20)

TestSuite(memory);

static const struct simgpu_truth_api *api_named(const struct simgpu_truth *t, const char *name,
						int nth)
{
	size_t i;

	for (i = 0; i < t->n_api; i++) {
		if (strcmp(t->api[i].name, name) == 0 && nth-- == 0) {
			return &t->api[i];
		}
	}
	cr_assert_fail("no call %s in the truth", name);
	return NULL;
}

Test(memory, pageable_copies_are_slower_than_pinned)
{
	void *dev;
	void *pinned;
	void *pageable = malloc(16 * MIB);
	uint64_t t_pinned;
	uint64_t t_pageable;

	CU(cudaMalloc(&dev, 16 * MIB));
	CU(cudaMallocHost(&pinned, 16 * MIB));
	CU(cudaMemcpy(dev, pinned, 16 * MIB, cudaMemcpyHostToDevice));
	CU(cudaMemcpy(dev, pageable, 16 * MIB, cudaMemcpyHostToDevice));
	CU(cudaMemcpy(pinned, dev, 16 * MIB, cudaMemcpyDeviceToHost));
	CU(cudaMemcpy(pageable, dev, 16 * MIB, cudaMemcpyDeviceToHost));
	t_pinned = op_at(0).end_ns - op_at(0).start_ns;
	t_pageable = op_at(1).end_ns - op_at(1).start_ns;
	cr_assert_eq(op_at(0).src_kind, SIMGPU_MEM_PINNED);
	cr_assert_eq(op_at(1).src_kind, SIMGPU_MEM_PAGEABLE);
	cr_assert_eq(op_at(0).copy_kind, SIMGPU_COPY_HTOD);
	cr_assert_eq(op_at(2).copy_kind, SIMGPU_COPY_DTOH);
	cr_assert_gt(t_pageable, 3 * t_pinned, "pageable %llu ns vs pinned %llu ns",
		     (unsigned long long)t_pageable, (unsigned long long)t_pinned);
	cr_assert_gt(op_at(3).end_ns - op_at(3).start_ns,
		     3 * (op_at(2).end_ns - op_at(2).start_ns));
	cr_assert_eq(op_at(1).bytes, 16 * MIB);
	free(pageable);
}

Test(memory, bandwidths_follow_the_environment)
{
	void *dev;
	void *pinned;

	setenv("SIMGPU_BW_H2D_PINNED_GBPS", "1", 1);
	setenv("SIMGPU_COPY_LATENCY_NS", "0", 1);
	CU(cudaMalloc(&dev, MIB));
	CU(cudaMallocHost(&pinned, MIB));
	CU(cudaMemcpy(dev, pinned, MIB, cudaMemcpyHostToDevice));
	cr_assert_eq(op_at(0).end_ns - op_at(0).start_ns, MIB, "1 GB/s is one byte per ns");
}

Test(memory, device_to_device_is_much_faster)
{
	void *a;
	void *b;
	void *pinned;

	CU(cudaMalloc(&a, 64 * MIB));
	CU(cudaMalloc(&b, 64 * MIB));
	CU(cudaMallocHost(&pinned, 64 * MIB));
	CU(cudaMemcpy(b, a, 64 * MIB, cudaMemcpyDeviceToDevice));
	CU(cudaMemcpy(a, pinned, 64 * MIB, cudaMemcpyHostToDevice));
	cr_assert_eq(op_at(0).copy_kind, SIMGPU_COPY_DTOD);
	cr_assert_gt((op_at(1).end_ns - op_at(1).start_ns),
		     10 * (op_at(0).end_ns - op_at(0).start_ns));
}

Test(memory, which_calls_block_the_host)
{
	struct simgpu_truth *t;
	cudaStream_t s;
	void *dev;
	void *pinned;
	void *pageable = malloc(8 * MIB);

	CU(cudaStreamCreate(&s));
	CU(cudaMalloc(&dev, 8 * MIB));
	CU(cudaMallocHost(&pinned, 8 * MIB));
	CU(cudaMemcpyAsync(dev, pinned, 8 * MIB, cudaMemcpyHostToDevice, s));
	CU(cudaMemcpyAsync(dev, pageable, 8 * MIB, cudaMemcpyHostToDevice, s));
	CU(cudaMemcpyAsync(pageable, dev, 8 * MIB, cudaMemcpyDeviceToHost, s));
	CU(cudaMemcpy(dev, dev, 8 * MIB, cudaMemcpyDeviceToDevice));
	CU(cudaMemset(dev, 0, 8 * MIB));
	t = truth_now();
	cr_assert_eq(api_named(t, "cudaMemcpyAsync", 0)->blocked_to_ns, 0,
		     "a pinned async copy returns at once");
	cr_assert_geq(api_named(t, "cudaMemcpyAsync", 1)->blocked_to_ns, t->ops[1].end_ns,
		      "a pageable async H2D copy blocks until done");
	cr_assert_geq(api_named(t, "cudaMemcpyAsync", 2)->blocked_to_ns, t->ops[2].end_ns,
		      "a pageable async D2H copy blocks until done");
	cr_assert_eq(api_named(t, "cudaMemcpy", 0)->blocked_to_ns, 0,
		     "a device-to-device cudaMemcpy does not block");
	cr_assert_eq(api_named(t, "cudaMemset", 0)->blocked_to_ns, 0);
	cr_assert(t->ops[1].async && !t->ops[3].async);
	cr_assert_eq(t->ops[4].type, SIMGPU_OP_MEMSET);
	simgpu_truth_destroy(t);
	free(pageable);
}

Test(memory, copies_in_one_direction_share_an_engine)
{
	cudaStream_t a;
	cudaStream_t b;
	cudaStream_t c;
	void *dev;
	void *pinned;

	/* slow enough that no scheduling delay can separate the calls by a copy */
	setenv("SIMGPU_BW_H2D_PINNED_GBPS", "0.001", 1);
	CU(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CU(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CU(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
	CU(cudaMalloc(&dev, 32 * MIB));
	CU(cudaMallocHost(&pinned, 32 * MIB));
	CU(cudaMemcpyAsync(dev, pinned, 32 * MIB, cudaMemcpyHostToDevice, a));
	CU(cudaMemcpyAsync(dev, pinned, 32 * MIB, cudaMemcpyHostToDevice, b));
	CU(cudaMemcpyAsync(pinned, dev, 32 * MIB, cudaMemcpyDeviceToHost, c));
	cr_assert_geq(op_at(1).start_ns, op_at(0).end_ns, "two H2D copies serialise");
	cr_assert_lt(op_at(2).start_ns, op_at(0).end_ns, "D2H runs beside H2D");
}

Test(memory, explicit_kinds_are_checked_against_pointers)
{
	char host[64];
	void *dev;

	CU(cudaMalloc(&dev, 64));
	cr_assert_eq(cudaMemcpy(host, host, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
	cr_assert_eq(cudaGetLastError(), cudaErrorInvalidValue);
	cr_assert_eq(cudaGetLastError(), cudaSuccess, "cudaGetLastError resets");
	cr_assert_eq(cudaMemcpy(dev, host, 64, (enum cudaMemcpyKind)42),
		     cudaErrorInvalidMemcpyDirection);
	CU(cudaMemcpy(dev, host, 64, cudaMemcpyDefault));
	cr_assert_eq(op_at(0).copy_kind, SIMGPU_COPY_HTOD, "cudaMemcpyDefault infers HtoD");
	cr_assert_eq(cudaMemset(host, 0, 64), cudaErrorInvalidValue);
}

Test(memory, two_d_and_symbol_copies)
{
	void *dev;
	void *pinned;
	static char symbol[256];

	CU(cudaMalloc(&dev, MIB));
	CU(cudaMallocHost(&pinned, MIB));
	CU(cudaMemcpy2D(dev, 1024, pinned, 2048, 1000, 100, cudaMemcpyHostToDevice));
	cr_assert_eq(op_at(0).bytes, 100000);
	cr_assert_eq(cudaMemcpy2D(dev, 512, pinned, 2048, 1000, 100, cudaMemcpyHostToDevice),
		     cudaErrorInvalidPitchValue);
	CU(cudaMemcpyToSymbol(symbol, pinned, 128, 0, cudaMemcpyHostToDevice));
	cr_assert_eq(op_at(1).copy_kind, SIMGPU_COPY_HTOD);
	cr_assert_eq(op_at(1).src_kind, SIMGPU_MEM_PINNED);
}

Test(memory, peer_copies_between_devices)
{
	void *a;
	void *b;

	setenv("SIMGPU_DEVICE_COUNT", "2", 1);
	CU(cudaMalloc(&a, MIB));
	CU(cudaSetDevice(1));
	CU(cudaMalloc(&b, MIB));
	CU(cudaMemcpyPeer(b, 1, a, 0, MIB));
	cr_assert_eq(op_at(0).copy_kind, SIMGPU_COPY_PTOP);
	cr_assert_eq(op_at(0).peer_device, 1);
	cr_assert_eq(cudaSetDevice(2), cudaErrorInvalidDevice);
}

Test(memory, pointer_attributes_know_every_kind)
{
	struct cudaPointerAttributes a;
	char stack[32];
	void *dev;
	void *pinned;
	void *managed;

	CU(cudaMalloc(&dev, 4096));
	CU(cudaHostAlloc(&pinned, 4096, cudaHostAllocMapped));
	CU(cudaMallocManaged(&managed, 4096, cudaMemAttachGlobal));
	CU(cudaPointerGetAttributes(&a, (char *)dev + 100));
	cr_assert_eq(a.type, cudaMemoryTypeDevice);
	CU(cudaPointerGetAttributes(&a, pinned));
	cr_assert_eq(a.type, cudaMemoryTypeHost);
	CU(cudaPointerGetAttributes(&a, managed));
	cr_assert_eq(a.type, cudaMemoryTypeManaged);
	CU(cudaPointerGetAttributes(&a, stack));
	cr_assert_eq(a.type, cudaMemoryTypeUnregistered);
	memset(pinned, 1, 4096); /* pinned and managed memory is real host memory */
	memset(managed, 1, 4096);
	CU(cudaFreeHost(pinned));
	CU(cudaFree(managed));
}

Test(memory, host_register_marks_a_range_pinned)
{
	char *buffer = aligned_alloc(4096, 4 * MIB);
	void *dev;

	CU(cudaMalloc(&dev, MIB));
	CU(cudaHostRegister(buffer, 4 * MIB, cudaHostRegisterDefault));
	cr_assert_eq(cudaHostRegister(buffer + 4096, 4096, 0),
		     cudaErrorHostMemoryAlreadyRegistered);
	CU(cudaMemcpy(dev, buffer + MIB, MIB, cudaMemcpyHostToDevice));
	cr_assert_eq(op_at(0).src_kind, SIMGPU_MEM_PINNED);
	CU(cudaHostUnregister(buffer));
	cr_assert_eq(cudaHostUnregister(buffer), cudaErrorHostMemoryNotRegistered);
	CU(cudaMemcpy(dev, buffer + MIB, MIB, cudaMemcpyHostToDevice));
	cr_assert_eq(op_at(1).src_kind, SIMGPU_MEM_PAGEABLE);
	free(buffer);
}

Test(memory, free_synchronises_and_memory_is_accounted)
{
	size_t free_before;
	size_t free_after;
	size_t total;
	void *dev;

	kernel(0, "k", 2000000);
	CU(cudaMemGetInfo(&free_before, &total));
	cr_assert_eq(total, 85520809984ull);
	CU(cudaMalloc(&dev, 256 * MIB));
	CU(cudaMemGetInfo(&free_after, &total));
	cr_assert_eq(free_before - free_after, 256 * MIB);
	launch(0, NULL);
	CU(cudaFree(dev));
	cr_assert_geq(now_ns(), op_at(0).end_ns, "cudaFree waits for the device");
	cr_assert_eq(cudaFree(dev), cudaErrorInvalidValue, "double free");
	cr_assert_eq(cudaFree((char *)0x1234), cudaErrorInvalidValue);
}

Test(memory, out_of_device_memory)
{
	void *dev = NULL;

	setenv("SIMGPU_DEVICE_MEMORY", "1073741824", 1);
	cr_assert_eq(cudaMalloc(&dev, 2ull << 30), cudaErrorMemoryAllocation);
	cr_assert_null(dev);
	CU(cudaMalloc(&dev, 256 * MIB));
}

Test(memory, stream_ordered_allocations_do_not_synchronise)
{
	struct simgpu_truth *t;
	cudaStream_t s;
	void *dev;

	kernel(0, "k", 10000000000ull);
	CU(cudaStreamCreate(&s));
	launch(0, s);
	CU(cudaMallocAsync(&dev, MIB, s));
	CU(cudaFreeAsync(dev, s));
	cr_assert_eq(cudaStreamQuery(s), cudaErrorNotReady, "nothing waited for the kernel");
	t = truth_now();
	cr_assert_eq(t->n_mem, 2);
	cr_assert_str_eq(t->mem[0].what, "malloc_async");
	cr_assert_str_eq(t->mem[1].what, "free_async");
	simgpu_truth_destroy(t);
}
