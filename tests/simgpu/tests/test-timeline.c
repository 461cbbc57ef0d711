/* SPDX-License-Identifier: MIT */
/*
 * The virtual device timeline: ordering within a stream, overlap across
 * streams, the legacy default stream's implicit synchronisation, per-thread
 * default streams, events, and blocking calls that wait for the modelled time.
 * Assertions read the ground truth (start and end of every operation), so they
 * hold however loaded the machine is; waits are checked as lower bounds only.
 */
#include <pthread.h>

#include "tests/simgpu/tests/sim-test.h"
#include "tests/simgpu/sim-tool.h"

const struct simgpu_runtime *simgpu_tool_attach(const struct simgpu_tool *tool);

/* Declared by cuda_runtime_api.h only under CUDA_API_PER_THREAD_DEFAULT_STREAM. */
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream);

TestSuite(timeline);

Test(timeline, same_stream_runs_in_order)
{
	cudaStream_t s;

	kernel(0, "first", 200000);
	kernel(1, "second", 50000);
	CU(cudaStreamCreate(&s));
	launch(0, s);
	launch(1, s);
	cr_assert_geq(op_at(1).start_ns, op_at(0).end_ns);
	cr_assert_eq(op_at(0).end_ns - op_at(0).start_ns, 200000);
	cr_assert_eq(op_at(1).end_ns - op_at(1).start_ns, 50000);
	cr_assert_eq(op_at(0).stream_id, op_at(1).stream_id);
}

Test(timeline, kernels_on_two_streams_overlap)
{
	cudaStream_t a;
	cudaStream_t b;

	/* durations far beyond any scheduling delay: nothing here waits for them */
	kernel(0, "long_a", 10000000000ull);
	kernel(1, "long_b", 10000000000ull);
	CU(cudaStreamCreate(&a));
	CU(cudaStreamCreate(&b));
	launch(0, a);
	launch(1, b);
	cr_assert_lt(op_at(1).start_ns, op_at(0).end_ns, "kernels on two streams must overlap");
	cr_assert_neq(op_at(0).stream_id, op_at(1).stream_id);
}

Test(timeline, launch_latency_separates_enqueue_and_start)
{
	setenv("SIMGPU_LAUNCH_LATENCY_NS", "7000", 1);
	kernel(0, "k", 1000);
	launch(0, NULL);
	cr_assert_geq(op_at(0).start_ns, op_at(0).enqueue_ns + 7000);
}

Test(timeline, legacy_stream_waits_for_blocking_streams_and_back)
{
	cudaStream_t blocking;

	kernel(0, "on_blocking", 500000);
	kernel(1, "on_legacy", 100000);
	kernel(2, "after", 100000);
	CU(cudaStreamCreate(&blocking));
	launch(0, blocking);
	launch(1, NULL);
	launch(2, blocking);
	cr_assert_geq(op_at(1).start_ns, op_at(0).end_ns, "legacy stream waits for blocking ones");
	cr_assert_geq(op_at(2).start_ns, op_at(1).end_ns, "blocking streams wait for legacy");
	cr_assert_eq(op_at(1).stream_id, 7u, "legacy default stream id is 7, as CUPTI reports");
}

Test(timeline, non_blocking_stream_ignores_legacy_stream)
{
	cudaStream_t free_running;

	kernel(0, "on_legacy", 10000000000ull);
	kernel(1, "non_blocking", 1000);
	CU(cudaStreamCreateWithFlags(&free_running, cudaStreamNonBlocking));
	launch(0, NULL);
	launch(1, free_running);
	cr_assert_lt(op_at(1).start_ns, op_at(0).end_ns);
}

static void *ptsz_thread(void *arg)
{
	dim3 grid = { 1, 1, 1 };
	dim3 block = { 32, 1, 1 };

	CU(cudaLaunchKernel_ptsz(KERNEL(0), grid, block, NULL, 0, NULL));
	return arg;
}

Test(timeline, per_thread_default_streams_are_distinct_and_overlap)
{
	pthread_t t1;
	pthread_t t2;

	kernel(0, "per_thread", 10000000000ull);
	pthread_create(&t1, NULL, ptsz_thread, NULL);
	pthread_create(&t2, NULL, ptsz_thread, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	cr_assert_eq(simgpu_op_count(), 2);
	cr_assert_neq(op_at(0).stream_id, op_at(1).stream_id);
	cr_assert_neq(op_at(0).stream_id, 7u);
	cr_assert_lt(op_at(1).start_ns, op_at(0).end_ns);
	cr_assert_lt(op_at(0).start_ns, op_at(1).end_ns);
}

Test(timeline, device_synchronize_waits_for_the_modelled_end)
{
	uint64_t returned;

	kernel(0, "two_ms", 2000000);
	launch(0, NULL);
	CU(cudaDeviceSynchronize());
	returned = now_ns();
	cr_assert_geq(returned, op_at(0).end_ns, "returned %llu ns before the kernel ended",
		      (unsigned long long)(op_at(0).end_ns - returned));
}

Test(timeline, stream_synchronize_and_query)
{
	cudaStream_t busy;
	cudaStream_t s;

	kernel(0, "ten_s", 10000000000ull); /* never waited for */
	kernel(1, "twenty_ms", 20000000);
	CU(cudaStreamCreate(&busy));
	CU(cudaStreamCreate(&s));
	launch(0, busy);
	cr_assert_eq(cudaStreamQuery(busy), cudaErrorNotReady);
	launch(1, s);
	CU(cudaStreamSynchronize(s));
	cr_assert_geq(now_ns(), op_at(1).end_ns);
	CU(cudaStreamQuery(s));
	cr_assert_eq(cudaGetLastError(), cudaSuccess, "NotReady is not an error");
}

Test(timeline, events_time_the_work_between_them)
{
	cudaStream_t busy;
	cudaEvent_t start;
	cudaEvent_t stop;
	cudaEvent_t far;
	float ms = 0;

	kernel(0, "k", 50000000);
	kernel(1, "ten_s", 10000000000ull); /* never waited for */
	CU(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking));
	CU(cudaEventCreate(&start));
	CU(cudaEventCreate(&stop));
	CU(cudaEventCreate(&far));
	CU(cudaEventRecord(start, NULL));
	launch(0, NULL);
	CU(cudaEventRecord(stop, NULL));
	launch(1, busy);
	CU(cudaEventRecord(far, busy));
	cr_assert_eq(cudaEventQuery(far), cudaErrorNotReady);
	cr_assert_eq(cudaEventElapsedTime(&ms, start, far), cudaErrorNotReady);
	CU(cudaEventSynchronize(stop));
	cr_assert_geq(now_ns(), op_at(0).end_ns);
	CU(cudaEventQuery(stop));
	CU(cudaEventElapsedTime(&ms, start, stop));
	cr_assert_geq(ms, 50.0f, "elapsed %f ms for a 50 ms kernel", ms);
	CU(cudaEventDestroy(start));
	cr_assert_eq(cudaEventDestroy(start), cudaErrorInvalidResourceHandle);
}

Test(timeline, timing_disabled_events_refuse_elapsed_time)
{
	cudaEvent_t a;
	cudaEvent_t b;
	float ms;

	CU(cudaEventCreateWithFlags(&a, cudaEventDisableTiming));
	CU(cudaEventCreate(&b));
	CU(cudaEventRecord(a, NULL));
	CU(cudaEventRecord(b, NULL));
	CU(cudaEventSynchronize(b));
	cr_assert_eq(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
}

Test(timeline, stream_wait_event_orders_across_streams)
{
	cudaStream_t producer;
	cudaStream_t consumer;
	cudaEvent_t ready;

	kernel(0, "produce", 1000000);
	kernel(1, "consume", 1000);
	CU(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
	CU(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
	CU(cudaEventCreate(&ready));
	launch(0, producer);
	CU(cudaEventRecord(ready, producer));
	CU(cudaStreamWaitEvent(consumer, ready, 0));
	launch(1, consumer);
	cr_assert_geq(op_at(1).start_ns, op_at(0).end_ns);
}

Test(timeline, serialised_kernels_never_overlap)
{
	/* What the CUPTI KERNEL kind does to a real GPU; here through the tool link. */
	const struct simgpu_runtime *rt = simgpu_tool_attach(NULL);
	cudaStream_t a;
	cudaStream_t b;

	kernel(0, "a", 500000);
	kernel(1, "b", 500000);
	CU(cudaStreamCreate(&a));
	CU(cudaStreamCreate(&b));
	rt->serialize_kernels(true);
	launch(0, a);
	launch(1, b);
	cr_assert_geq(op_at(1).start_ns, op_at(0).end_ns);
}

Test(timeline, next_duration_overrides_one_launch)
{
	kernel(0, "k", 100000);
	simgpu_next_kernel_duration(7000);
	launch(0, NULL);
	launch(0, NULL);
	cr_assert_eq(op_at(0).end_ns - op_at(0).start_ns, 7000);
	cr_assert_eq(op_at(1).end_ns - op_at(1).start_ns, 100000);
}

Test(timeline, unregistered_kernels_take_the_default_duration)
{
	setenv("SIMGPU_KERNEL_DEFAULT_NS", "12345", 1);
	launch(5, NULL);
	cr_assert_eq(op_at(0).end_ns - op_at(0).start_ns, 12345);
	cr_assert_str_neq(op_at(0).name, "");
}

Test(timeline, launch_cost_is_spent_on_the_host)
{
	uint64_t before;

	setenv("SIMGPU_LAUNCH_COST_NS", "200000", 1);
	kernel(0, "k", 1000);
	CU(cudaFree(NULL));
	before = now_ns();
	launch(0, NULL);
	cr_assert_geq(now_ns() - before, 200000);
}
