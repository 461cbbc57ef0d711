/* SPDX-License-Identifier: MIT */
/*
 * Mechanism: two streams ordered by an event (not a scenario with a verdict of its own;
 * tests/analyzer/test-events.c checks the dependency graph on it).
 *
 * 30 steps. Stream A runs `producer` (2 ms) and records an event; stream B waits for
 * the event (cudaStreamWaitEvent) and runs `consumer` (1 ms). After the record, A also
 * runs `side` (0.5 ms), which B does not wait for. The host then waits for B. Every
 * launch is made at once, so B's consumer is launched long before it can start: what
 * holds it back is the producer on the other stream, through the event alone.
 *
 * Arguments:
 *   producer=F   the producer takes F x its time (the fix of the before/after pair:
 *                --what-if 'kernel:producer*F')
 *   event-sync   the host waits with cudaEventRecord(done, B) + cudaEventSynchronize
 *                instead of cudaStreamSynchronize(B)
 */
#include "tests/workloads/common/workload.h"

static const char producer;
static const char consumer;
static const char side;

int main(int argc, char **argv)
{
	double producer_f = wl_knob_factor(argc, argv, "producer", 1.0);
	bool event_sync = wl_knob(argc, argv, "event-sync");
	cudaStream_t a = NULL, b = NULL;
	cudaEvent_t ready[2] = { NULL, NULL }, done = NULL;
	struct wl w;

	wl_start(&w, "event_streams");
	wl_kernel(&producer, "producer", (uint64_t)(2000000 * producer_f));
	wl_kernel(&consumer, "consumer", 1000000);
	wl_kernel(&side, "side", 500000);
	WL_CUDA(&w, cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	WL_CUDA(&w, cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	WL_CUDA(&w, cudaEventCreateWithFlags(&ready[0], cudaEventDisableTiming));
	WL_CUDA(&w, cudaEventCreateWithFlags(&ready[1], cudaEventDisableTiming));
	WL_CUDA(&w, cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
	for (int step = 0; step < 30 && w.gpu; step++) {
		cudaEvent_t ev = ready[step % 2]; /* handles are reused, as frameworks do */
		inferscope_range_push("step");
		wl_launch(&w, &producer, 264, 256, a);
		WL_CUDA(&w, cudaEventRecord(ev, a));
		wl_launch(&w, &side, 132, 256, a);
		WL_CUDA(&w, cudaStreamWaitEvent(b, ev, 0));
		wl_launch(&w, &consumer, 264, 256, b);
		if (event_sync) {
			WL_CUDA(&w, cudaEventRecord(done, b));
			WL_CUDA(&w, cudaEventSynchronize(done));
		} else {
			WL_CUDA(&w, cudaStreamSynchronize(b));
		}
		inferscope_range_pop();
	}
	if (w.gpu) {
		WL_CUDA(&w, cudaDeviceSynchronize());
	}
	return wl_finish(&w);
}
