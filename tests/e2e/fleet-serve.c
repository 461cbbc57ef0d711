/* SPDX-License-Identifier: MIT */
/*
 * A long-running server on the simulated GPU for the flight recorder's end-to-end test
 * (issue 14, "Done means"): steps ("step" scopes) that upload a request, run three
 * kernels and download the result, then synchronise, until it is killed or its time
 * is up. Usage: fleet-serve SECONDS [CONTROL]. Prints "ready <pid>" after the first step.
 *
 * CONTROL (optional) is a file of three 64-bit words shared with the test: the server
 * stores the number of steps it completed in word 0 after each step; when the test
 * stores 1 in word 1 the server stops stepping, stores 1 in word 2 and waits to be
 * killed. The test then knows exactly how many steps the recording must hold.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/workloads/common/workload.h"

#define IN_BYTES (1u << 20)
#define OUT_BYTES (256u << 10)

static const char embed;
static const char decoder;
static const char lm_head;

/* The control words (see above), or NULL without CONTROL. */
static uint64_t *control(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 3 * sizeof(uint64_t)) != 0) {
		perror(path);
		exit(2);
	}
	void *m = mmap(NULL, 3 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return m;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 60;
	cudaStream_t stream = NULL;
	void *in = NULL, *out = NULL, *dev = NULL;
	struct wl w;
	uint64_t *ctl = argc > 2 ? control(argv[2]) : NULL;

	wl_start(&w, "fleet_serve");
	wl_kernel(&embed, "embed_tokens", 100000);
	wl_kernel(&decoder, "decoder_layers", 800000);
	wl_kernel(&lm_head, "lm_head", 200000);
	WL_CUDA(&w, cudaStreamCreate(&stream));
	WL_CUDA(&w, cudaMalloc(&dev, IN_BYTES));
	WL_CUDA(&w, cudaMallocHost(&in, IN_BYTES));
	WL_CUDA(&w, cudaMallocHost(&out, OUT_BYTES));
	uint64_t end = wl_now_ns() + (uint64_t)(secs * 1e9);
	for (unsigned long i = 0; w.gpu && wl_now_ns() < end; i++) {
		inferscope_range_push("step");
		WL_CUDA(&w, cudaMemcpyAsync(dev, in, IN_BYTES, cudaMemcpyHostToDevice, stream));
		wl_launch(&w, &embed, 64, 256, stream);
		wl_launch(&w, &decoder, 256, 256, stream);
		wl_launch(&w, &lm_head, 128, 256, stream);
		WL_CUDA(&w, cudaMemcpyAsync(out, dev, OUT_BYTES, cudaMemcpyDeviceToHost, stream));
		WL_CUDA(&w, cudaStreamSynchronize(stream));
		inferscope_range_pop();
		if (ctl != NULL) {
			__atomic_store_n(&ctl[0], i + 1, __ATOMIC_RELEASE);
		}
		if (i == 0) {
			printf("ready %d\n", (int)getpid());
			fflush(stdout);
		}
		if (ctl != NULL && __atomic_load_n(&ctl[1], __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&ctl[2], 1, __ATOMIC_RELEASE);
			for (;;) {
				pause(); /* stepping stopped: waits for SIGKILL */
			}
		}
	}
	return wl_finish(&w);
}
