/* SPDX-License-Identifier: MIT */
/*
 * Scenario: a synchronisation after every kernel.
 * Verdict: balanced (host preparation and GPU compute take similar shares, but
 * never at the same time). Top suggestion: excessive synchronisation: drop the
 * cudaDeviceSynchronize after every launch and synchronise once per batch, so the
 * host prepares the next kernel while the GPU runs this one.
 *
 * 3,000 iterations of 40 µs of host preparation, a 50 µs kernel and a
 * cudaDeviceSynchronize.
 *
 * Fixed (argument "no-sync", the change sync.excessive simulates): no synchronisation in
 * the loop, one after it.
 */
#include "tests/workloads/common/workload.h"

static const char step_kernel;

int main(int argc, char **argv)
{
	bool sync = !wl_knob(argc, argv, "no-sync");
	struct wl w;
	int i;

	wl_start(&w, "sync_every_kernel");
	wl_kernel(&step_kernel, "decode_step", 50000);
	for (i = 0; i < 3000; i++) {
		inferscope_range_push("prepare");
		wl_tokenize(40000);
		inferscope_range_pop();
		if (w.gpu) {
			wl_launch(&w, &step_kernel, 132, 256, NULL);
			if (sync) {
				WL_CUDA(&w, cudaDeviceSynchronize());
			}
		}
	}
	if (!sync) {
		WL_CUDA(&w, cudaDeviceSynchronize());
	}
	return wl_finish(&w);
}
