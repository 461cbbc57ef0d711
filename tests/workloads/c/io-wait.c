/* SPDX-License-Identifier: MIT */
/*
 * Scenario: idle, waiting for input (pipe reads, file reads, sleeps).
 * Verdict: idle, waiting_for_input (neither the CPU nor the GPU is busy: the
 * process waits for its input, and no lever of its own gains). Top suggestion:
 * host.input-wait: the reads of the pipe wait for its writer, which paces the
 * run; nothing in the reader (prefetching, faster code, fewer syncs) is
 * credited with that wait.
 *
 * 80 requests arrive on a pipe from a producer thread every 3 ms; each is read,
 * a 256 KiB chunk is read from a file, the server sleeps 0.5 ms (a downstream
 * call), then runs a 0.2 ms GPU step.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/workloads/common/workload.h"

#define REQUESTS 80

static const char step_kernel;
static int pipe_fds[2];

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = us * 1000 };

	nanosleep(&ts, NULL);
}

static void *producer(void *arg)
{
	char request[4096];
	int i;

	memset(request, 'r', sizeof(request));
	for (i = 0; i < REQUESTS; i++) {
		sleep_us(3000);
		if (write(pipe_fds[1], request, sizeof(request)) < 0) {
			break;
		}
	}
	close(pipe_fds[1]);
	return arg;
}

static FILE *make_input(void)
{
	static char chunk[256 << 10];
	FILE *f = tmpfile();

	if (f) {
		memset(chunk, 'x', sizeof(chunk));
		fwrite(chunk, 1, sizeof(chunk), f);
		fflush(f);
	}
	return f;
}

int main(void)
{
	static char request[4096];
	static char data[256 << 10];
	FILE *input = make_input();
	pthread_t thread;
	struct wl w;
	int i;

	wl_start(&w, "io_wait");
	wl_kernel(&step_kernel, "small_step", 200000);
	if (!input || pipe(pipe_fds) != 0) {
		return 1;
	}
	pthread_create(&thread, NULL, producer, NULL);
	for (i = 0; i < REQUESTS; i++) {
		size_t got = 0;
		ssize_t n;

		inferscope_range_push("wait_request");
		while (got < sizeof(request) &&
		       (n = read(pipe_fds[0], request + got, sizeof(request) - got)) > 0) {
			got += (size_t)n;
		}
		inferscope_range_pop();
		inferscope_range_push("load");
		if (pread(fileno(input), data, sizeof(data), 0) < 0) {
			perror("pread");
		}
		sleep_us(500);
		inferscope_range_pop();
		if (w.gpu) {
			wl_launch(&w, &step_kernel, 64, 256, NULL);
			WL_CUDA(&w, cudaStreamSynchronize(NULL));
		}
	}
	pthread_join(thread, NULL);
	fclose(input);
	return wl_finish(&w);
}
