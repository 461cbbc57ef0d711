/* SPDX-License-Identifier: MIT */
/*
 * The workloads' shared helpers (see workload.h).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/simgpu/simgpu.h"
#include "tests/workloads/common/workload.h"

typedef int (*register_fn)(const void *, const char *, uint64_t);

static register_fn kernel_register;

uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool wl_knob(int argc, char **argv, const char *name)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], name) == 0) {
			return true;
		}
	}
	return false;
}

double wl_knob_factor(int argc, char **argv, const char *name, double dflt)
{
	size_t n = strlen(name);
	int i;

	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
			char *end = NULL;
			double f = strtod(argv[i] + n + 1, &end);

			if (end != argv[i] + n + 1 && *end == '\0' && f > 0 && f < 1e6) {
				return f;
			}
			fprintf(stderr, "%s: ignored (expected %s=FACTOR)\n", argv[i], name);
		}
	}
	return dflt;
}

void wl_start(struct wl *w, const char *name)
{
	memset(w, 0, sizeof(*w));
	w->name = name;
	w->gpu = true;
	w->start_ns = wl_now_ns();
	kernel_register = (register_fn)simgpu_lookup("simgpu_kernel_register");
}

bool wl_cuda(struct wl *w, const char *call, cudaError_t err)
{
	if (err == cudaSuccess) {
		return true;
	}
	if (w->gpu) {
		w->gpu = false;
		w->error = err;
		w->failed_call = call;
		printf("%s: %s failed: %s (%d): %s; stopping the GPU part\n", w->name, call,
		       cudaGetErrorName(err), (int)err, cudaGetErrorString(err));
	}
	return false;
}

int wl_finish(struct wl *w)
{
	double ms = (double)(wl_now_ns() - w->start_ns) / 1e6;

	if (w->gpu) {
		printf("workload %s: gpu=ok wall_ms=%.1f\n", w->name, ms);
	} else {
		printf("workload %s: gpu=unavailable error=%s code=%d wall_ms=%.1f\n", w->name,
		       cudaGetErrorName(w->error), (int)w->error, ms);
	}
	fflush(stdout);
	return 0;
}

void wl_kernel(const void *func, const char *name, uint64_t duration_ns)
{
	if (kernel_register) {
		kernel_register(func, name, duration_ns);
	}
}

bool wl_launch(struct wl *w, const void *func, unsigned grid, unsigned block, cudaStream_t s)
{
	dim3 g = { grid, 1, 1 };
	dim3 b = { block, 1, 1 };

	return w->gpu && wl_cuda(w, "cudaLaunchKernel", cudaLaunchKernel(func, g, b, NULL, 0, s));
}

/* ---- tokenisation-like work: split, normalise, hash, greedy subword match ---- */

#define VOCAB 8192

static const char *const words[] = {
	"the",	   "inference",	   "server",   "receives",  "requests", "with", "long",
	"prompts", "tokenization", "splits",   "Unicode",   "text",	"into", "subword",
	"units",   "before",	   "batching", "them",	    "for",	"the",	"GPU",
	"which",   "then",	   "runs",     "attention", "layers",	"over", "every",
	"token",   "of",	   "the",      "sequence",  "quickly",
};

static uint32_t fnv(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++) {
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	}
	return h;
}

/* Greedy longest-prefix split of one word against a hashed vocabulary. */
static uint64_t subwords(const char *word, size_t len, const uint8_t *vocab)
{
	uint64_t ids = 0;
	size_t pos = 0;

	while (pos < len) {
		size_t n = len - pos;

		while (n > 1 && !vocab[fnv(word + pos, n) % VOCAB]) {
			n--;
		}
		ids += fnv(word + pos, n) % VOCAB;
		pos += n;
	}
	return ids;
}

uint64_t wl_tokenize(uint64_t cpu_ns)
{
	static uint8_t vocab[VOCAB];
	uint64_t until = thread_cpu_ns() + cpu_ns;
	uint64_t checksum = 0;
	uint32_t seed = 12345;
	char word[32];
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		vocab[fnv(words[i], strlen(words[i]) / 2 + 1) % VOCAB] = 1;
	}
	while (thread_cpu_ns() < until) {
		for (i = 0; i < 256; i++) {
			const char *w;
			size_t n;
			size_t j;

			seed = seed * 1103515245u + 12345u;
			w = words[(seed >> 16) % (sizeof(words) / sizeof(words[0]))];
			n = strlen(w);
			for (j = 0; j < n && j < sizeof(word) - 1; j++) {
				word[j] = (char)tolower((unsigned char)w[j]);
			}
			checksum += subwords(word, n, vocab);
		}
	}
	return checksum;
}
