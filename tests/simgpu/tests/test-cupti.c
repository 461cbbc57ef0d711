/* SPDX-License-Identifier: MIT */
/*
 * The simulated CUPTI, used as a profiler uses the real one (dlopen, buffer
 * callbacks, activity kinds), compared against the simulator's ground truth.
 */
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>

#include "tests/simgpu/tests/cupti-client.h"
#include "tests/simgpu/tests/sim-test.h"

#define US 1000u

static const CUpti_ActivityKind all_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
	CUPTI_ACTIVITY_KIND_DEVICE,
	CUPTI_ACTIVITY_KIND_OVERHEAD,
	0,
};

TestSuite(cupti);

static uint64_t CUPTIAPI monotonic_cb(void)
{
	return client_monotonic();
}

static uint32_t my_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static const CUpti_ActivityAPI *api_record(uint32_t correlation)
{
	size_t i;

	for (i = 0; i < got.n_apis; i++) {
		if (got.apis[i].correlationId == correlation) {
			return &got.apis[i];
		}
	}
	return NULL;
}

static uint64_t diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Starts CUPTI the way InferScope does: monotonic clock, system thread ids. */
static void start_like_inferscope(void)
{
	cr_assert(client_open());
	cr_assert_eq(cupti.register_timestamp(monotonic_cb), CUPTI_SUCCESS);
	cr_assert_eq(cupti.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
	cr_assert(client_start(all_kinds));
}

static void small_workload(void)
{
	void *dev;
	void *pinned;
	void *pageable = malloc(1u << 20);

	kernel(0, "gemm", 300 * US);
	kernel(1, "softmax", 40 * US);
	CU(cudaMalloc(&dev, 1u << 20));
	CU(cudaMallocHost(&pinned, 1u << 20));
	CU(cudaMemcpyAsync(dev, pinned, 1u << 20, cudaMemcpyHostToDevice, NULL));
	launch(0, NULL);
	launch(1, NULL);
	CU(cudaMemsetAsync(dev, 0, 4096, NULL));
	CU(cudaMemcpy(pageable, dev, 1u << 20, cudaMemcpyDeviceToHost));
	CU(cudaDeviceSynchronize());
	free(pageable);
}

/* The CUPTI record of @p op, checked field by field; returns its start and end. */
static void check_record(const struct simgpu_op *op, uint64_t *start, uint64_t *end)
{
	if (op->type == SIMGPU_OP_KERNEL) {
		size_t i = op->name[0] == 's'; /* gemm ends first, then softmax */
		const CUpti_ActivityKernel10 *k = &got.kernels[i];

		cr_assert_eq(k->correlationId, op->correlation_id);
		cr_assert_str_eq(got.kernel_names[i], op->name);
		cr_assert_eq(k->streamId, op->stream_id);
		cr_assert_eq(k->gridX, 4);
		*start = k->start;
		*end = k->end;
	} else if (op->type == SIMGPU_OP_MEMCPY) {
		const CUpti_ActivityMemcpy6 *m = &got.copies[op->copy_kind == SIMGPU_COPY_DTOH];

		cr_assert_eq(m->correlationId, op->correlation_id);
		cr_assert_eq(m->runtimeCorrelationId, op->correlation_id);
		cr_assert_eq(m->copyKind, op->copy_kind);
		cr_assert_eq(m->srcKind, op->src_kind);
		cr_assert_eq(m->dstKind, op->dst_kind);
		cr_assert_eq(m->bytes, op->bytes);
		*start = m->start;
		*end = m->end;
	} else {
		cr_assert_eq(got.memsets[0].correlationId, op->correlation_id);
		*start = got.memsets[0].start;
		*end = got.memsets[0].end;
	}
}

Test(cupti, records_match_the_ground_truth)
{
	struct simgpu_truth *t;
	size_t i;

	start_like_inferscope();
	small_workload();
	client_flush(true);
	t = truth_now();
	cr_assert_eq(got.n_kernels, 2);
	cr_assert_eq(got.n_copies, 2);
	cr_assert_eq(got.n_memsets, 1);
	for (i = 0; i < t->n_ops; i++) {
		const struct simgpu_op *op = &t->ops[i];
		const CUpti_ActivityAPI *api = api_record(op->correlation_id);
		uint64_t start = 0;
		uint64_t end = 0;

		cr_assert_not_null(api, "no API record for correlation %u", op->correlation_id);
		cr_assert_eq(api->threadId, my_tid(), "SYSTEM thread ids are gettid()");
		cr_assert_eq(api->kind, CUPTI_ACTIVITY_KIND_RUNTIME);
		check_record(op, &start, &end);
		cr_assert_lt(diff(start, op->start_ns), 2 * US, "start off by %llu ns",
			     (unsigned long long)diff(start, op->start_ns));
		cr_assert_lt(diff(end, op->end_ns), 2 * US);
	}
	cr_assert_eq(got.copies[0].srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
	cr_assert_eq(got.copies[1].dstKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
	cr_assert_eq(got.copies[0].flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC,
		     CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
	cr_assert_eq(got.n_syncs, 1);
	cr_assert_eq(got.syncs[0].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
	cr_assert_eq(got.n_devices, 1);
	cr_assert_eq(got.devices[0].numMultiprocessors, 132);
	cr_assert_eq(got.devices[0].computeCapabilityMajor, 9);
	cr_assert_gt(got.n_overheads, 0, "buffer requests are reported as overhead");
	simgpu_truth_destroy(t);
}

Test(cupti, api_records_cover_every_call_with_the_truth_interval)
{
	struct simgpu_truth *t;
	size_t i;

	start_like_inferscope();
	small_workload();
	client_flush(true);
	t = truth_now();
	for (i = 0; i < t->n_api; i++) {
		const CUpti_ActivityAPI *api = api_record(t->api[i].correlation_id);
		const char *name = NULL;

		cr_assert_not_null(api, "%s has no API record", t->api[i].name);
		cr_assert_eq(api->cbid, t->api[i].cbid);
		cr_assert_lt(diff(api->start, t->api[i].start_ns), 5 * US);
		cr_assert_eq(api->returnValue, (uint32_t)t->api[i].result);
		cr_assert_eq(cupti.callback_name(CUPTI_CB_DOMAIN_RUNTIME_API, api->cbid, &name),
			     CUPTI_SUCCESS);
		cr_assert_str_eq(name, t->api[i].name);
	}
	simgpu_truth_destroy(t);
}

Test(cupti, default_timestamps_are_realtime)
{
	struct timespec rt;
	struct timespec mono;
	int64_t offset;

	cr_assert(client_start(all_kinds));
	kernel(0, "k", 100 * US);
	launch(0, NULL);
	CU(cudaDeviceSynchronize());
	client_flush(false);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	offset = (int64_t)(rt.tv_sec - mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
	cr_assert_eq(got.n_kernels, 1);
	cr_assert_lt(diff(got.kernels[0].start, (uint64_t)((int64_t)op_at(0).start_ns + offset)),
		     50000000u, "kernel start is not on CLOCK_REALTIME");
}

Test(cupti, external_correlation_maps_back_to_pushed_ids)
{
	uint64_t popped = 0;
	size_t i;
	bool found = false;

	start_like_inferscope();
	kernel(0, "k", 10 * US);
	cr_assert_eq(cupti.push_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 4242),
		     CUPTI_SUCCESS);
	launch(0, NULL);
	cr_assert_eq(cupti.pop_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &popped),
		     CUPTI_SUCCESS);
	cr_assert_eq(popped, 4242);
	cr_assert_eq(cupti.pop_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &popped),
		     CUPTI_ERROR_QUEUE_EMPTY);
	cr_assert_eq(cupti.push_external(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1),
		     CUPTI_ERROR_INVALID_PARAMETER);
	launch(0, NULL);
	CU(cudaDeviceSynchronize());
	client_flush(true);
	cr_assert_eq(got.n_kernels, 2);
	for (i = 0; i < got.n_externals; i++) {
		if (got.externals[i].externalId == 4242) {
			cr_assert_eq(got.externals[i].externalKind,
				     CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
			cr_assert_eq(got.externals[i].correlationId, got.kernels[0].correlationId);
			found = true;
		}
		cr_assert_neq(got.externals[i].correlationId, got.kernels[1].correlationId,
			      "no external id was pushed for the second launch");
	}
	cr_assert(found);
	cr_assert_eq(got.n_externals, 1);
}

Test(cupti, a_second_subscriber_is_refused)
{
	CUpti_SubscriberHandle first;
	CUpti_SubscriberHandle second;

	cr_assert(client_open());
	cr_assert_eq(cupti.subscribe(&first, NULL, NULL), CUPTI_SUCCESS);
	cr_assert_eq(cupti.subscribe(&second, NULL, NULL),
		     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	cr_assert_eq(cupti.unsubscribe(first), CUPTI_SUCCESS);
	cr_assert_eq(cupti.subscribe(&second, NULL, NULL), CUPTI_SUCCESS);
}

Test(cupti, another_tool_holding_cupti_refuses_us)
{
	CUpti_SubscriberParams params;
	CUpti_SubscriberHandle handle;
	char holder[64] = "";
	const char *text = NULL;

	setenv("SIMGPU_CUPTI_HOLDER", "Nsight Systems", 1);
	cr_assert(client_open());
	memset(&params, 0, sizeof(params));
	params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	params.oldSubscriberName = holder;
	params.oldSubscriberSize = sizeof(holder);
	cr_assert_eq(cupti.subscribe_v2(&handle, NULL, NULL, &params),
		     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	cr_assert_str_eq(holder, "Nsight Systems");
	cr_assert_eq(cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
		     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	cr_assert_eq(cupti.result_string(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &text),
		     CUPTI_SUCCESS);
	cr_assert_str_eq(text, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
}

/* Every record is either delivered or counted as dropped: never silently lost. */
Test(cupti, records_without_room_are_dropped_and_counted)
{
	static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
						    CUPTI_ACTIVITY_KIND_RUNTIME, 0 };
	size_t dropped = 0;
	int i;

	setenv("SIMGPU_CUPTI_BUFFER_LIMIT", "2", 1);
	setenv("SIMGPU_LAUNCH_COST_NS", "0", 1);
	client_set_buffers(4096, 0);
	cr_assert(client_start(kinds));
	kernel(0, "tiny", 1000);
	for (i = 0; i < 200; i++) {
		launch(0, NULL);
	}
	CU(cudaDeviceSynchronize());
	client_flush(true);
	cr_assert_eq(cupti.dropped(NULL, 0, &dropped), CUPTI_SUCCESS);
	cr_assert_gt(dropped, 0);
	cr_assert_eq(got.n_buffers, 2);
	/* 200 launches and one synchronisation: 201 API records, 200 kernel records */
	cr_assert_eq(got.n_records + dropped, 401, "%zu delivered + %zu dropped", got.n_records,
		     dropped);
	cr_assert_eq(cupti.dropped(NULL, 0, &dropped), CUPTI_SUCCESS);
	cr_assert_eq(dropped, 0, "reading the count resets it");
}

Test(cupti, buffers_too_small_for_a_record_lose_it_counted)
{
	static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_RUNTIME, 0 };
	size_t dropped = 0;
	int count;

	client_set_buffers(16, 0);
	cr_assert(client_start(kinds));
	CU(cudaGetDeviceCount(&count));
	CU(cudaGetDeviceCount(&count));
	client_flush(true);
	cr_assert_eq(cupti.dropped(NULL, 0, &dropped), CUPTI_SUCCESS);
	cr_assert_eq(got.n_records, 0);
	cr_assert_eq(dropped, 2);
	cr_assert_eq(got.n_buffers, 2, "the useless buffers still come back to be freed");
}

Test(cupti, a_client_that_declines_buffers_loses_records_counted)
{
	static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_RUNTIME, 0 };
	size_t dropped = 0;
	int count;

	client_set_buffers(4096, 1);
	cr_assert(client_start(kinds));
	CU(cudaGetDeviceCount(&count));
	client_flush(true);
	CU(cudaGetDeviceCount(&count));
	CU(cudaGetDeviceCount(&count));
	client_flush(true);
	cr_assert_eq(cupti.dropped(NULL, 0, &dropped), CUPTI_SUCCESS);
	cr_assert_eq(got.n_records, 1);
	cr_assert_eq(dropped, 2);
}

static uint32_t worker_tid;

static void *worker(void *arg)
{
	worker_tid = my_tid();
	launch(0, NULL);
	CU(cudaStreamSynchronize(NULL));
	return arg;
}

Test(cupti, records_of_threads_that_already_exited)
{
	pthread_t thread;
	size_t i;
	size_t from_worker = 0;

	start_like_inferscope();
	kernel(0, "k", 50 * US);
	pthread_create(&thread, NULL, worker, NULL);
	pthread_join(thread, NULL);
	client_flush(true);
	for (i = 0; i < got.n_apis; i++) {
		from_worker += got.apis[i].threadId == worker_tid;
	}
	cr_assert_eq(from_worker, 2, "the launch and the synchronisation of the exited thread");
	cr_assert_eq(got.n_kernels, 1);
	cr_assert_eq(op_at(0).thread_id, worker_tid);
}

Test(cupti, a_forced_flush_hands_out_unfinished_records_without_times)
{
	static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 0 };

	cr_assert(client_start(kinds));
	kernel(0, "long", 10000000000ull);
	launch(0, NULL);
	client_flush(false);
	cr_assert_eq(got.n_kernels, 0, "an unfinished kernel is not complete");
	client_flush(true);
	cr_assert_eq(got.n_kernels, 1);
	cr_assert_eq(got.kernels[0].start, 0);
	cr_assert_eq(got.kernels[0].end, 0);
}

Test(cupti, the_timestamp_callback_sets_the_clock)
{
	start_like_inferscope();
	kernel(0, "k", 20 * US);
	launch(0, NULL);
	CU(cudaDeviceSynchronize());
	client_flush(false);
	cr_assert_eq(got.n_kernels, 1);
	cr_assert_lt(diff(got.kernels[0].start, op_at(0).start_ns), 2 * US);
	/* the same clock domain (a wrong one is off by hours or decades) */
	cr_assert_lt(diff(got.apis[0].start, op_at(0).enqueue_ns), 50000 * US);
}

Test(cupti, hidden_launches_are_seen_by_cupti_only)
{
	size_t i;
	bool driver = false;

	start_like_inferscope();
	cr_assert_eq(simgpu_launch_hidden(SIMGPU_HIDDEN_DRIVER, "triton_kernel", 30 * US, 1, 1, 1,
					  64, 1, 1, 0, NULL),
		     cudaSuccess);
	CU(cudaDeviceSynchronize());
	client_flush(true);
	cr_assert_eq(got.n_kernels, 1);
	cr_assert_str_eq(got.kernel_names[0], "triton_kernel");
	for (i = 0; i < got.n_apis; i++) {
		if (got.apis[i].kind == CUPTI_ACTIVITY_KIND_DRIVER) {
			cr_assert_eq(got.apis[i].cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
			cr_assert_eq(got.apis[i].correlationId, got.kernels[0].correlationId);
			driver = true;
		}
	}
	cr_assert(driver);
}

Test(cupti, the_kernel_kind_serialises_the_gpu)
{
	static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_KERNEL, 0 };
	cudaStream_t a;
	cudaStream_t b;

	cr_assert(client_start(kinds));
	kernel(0, "a", 500 * US);
	kernel(1, "b", 500 * US);
	CU(cudaStreamCreate(&a));
	CU(cudaStreamCreate(&b));
	launch(0, a);
	launch(1, b);
	cr_assert_geq(op_at(1).start_ns, op_at(0).end_ns);
	CU(cudaDeviceSynchronize());
	client_flush(false);
	cr_assert_eq(got.n_kernels, 2);
	cr_assert_eq(got.kernels[0].kind, CUPTI_ACTIVITY_KIND_KERNEL);
}

struct seen {
	int enters;
	int exits;
	uint32_t correlation;
	char symbol[64];
};

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cb = data;
	struct seen *seen = userdata;

	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API ||
	    cbid != CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
		return;
	}
	if (cb->callbackSite == CUPTI_API_ENTER) {
		seen->enters++;
		seen->correlation = cb->correlationId;
	} else {
		seen->exits++;
		snprintf(seen->symbol, sizeof(seen->symbol), "%s", cb->symbolName);
	}
}

Test(cupti, callbacks_bracket_runtime_calls)
{
	CUpti_SubscriberHandle handle;
	struct seen seen = { 0 };

	cr_assert(client_open());
	cr_assert_eq(cupti.subscribe(&handle, on_callback, &seen), CUPTI_SUCCESS);
	cr_assert_eq(cupti.enable_domain(1, handle, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
	kernel(0, "attention", 10 * US);
	launch(0, NULL);
	cr_assert_eq(seen.enters, 1);
	cr_assert_eq(seen.exits, 1);
	cr_assert_eq(seen.correlation, op_at(0).correlation_id);
	cr_assert_str_eq(seen.symbol, "attention");
}

Test(cupti, record_iteration_and_version)
{
	uint8_t buffer[64] = { 0 };
	CUpti_Activity *record = NULL;
	uint32_t version = 0;

	cr_assert(client_open());
	cr_assert_eq(cupti.get_version(&version), CUPTI_SUCCESS);
	cr_assert_eq(version, CUPTI_API_VERSION);
	cr_assert_eq(cupti.next_record(NULL, 0, &record), CUPTI_ERROR_INVALID_PARAMETER);
	cr_assert_eq(cupti.next_record(buffer, 0, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
	cr_assert_eq(cupti.next_record(buffer, sizeof(buffer), &record), CUPTI_ERROR_INVALID_KIND);
	cr_assert_eq(cupti.enable((CUpti_ActivityKind)9999), CUPTI_ERROR_INVALID_KIND);
	cr_assert_eq(cupti.flush_all(0), CUPTI_ERROR_INVALID_OPERATION,
		     "flushing needs registered callbacks");
}

Test(cupti, the_worker_delivers_full_buffers_on_its_own)
{
	static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_RUNTIME, 0 };
	int count;
	int i;

	setenv("SIMGPU_CUPTI_FLUSH_MS", "5", 1);
	client_set_buffers(1024, 0);
	cr_assert(client_start(kinds));
	for (i = 0; i < 200; i++) {
		CU(cudaGetDeviceCount(&count));
	}
	for (i = 0; i < 400 && got.n_buffers == 0; i++) {
		usleep(5000);
	}
	cr_assert_gt(got.n_buffers, 0, "full buffers come back without a flush");
}
