/* SPDX-License-Identifier: MIT */
/*
 * The malloc family under the preload. Usage: wl-alloc MODE [ARGS]
 *   family             every allocation function once, inside a scope "family"
 *   errno              failures keep their errno (printed, compared with a plain run)
 *   sample N SIZE      N malloc(SIZE)+free pairs (Poisson sampling statistics)
 *   threads T N SIZE   T threads, each N malloc(SIZE) kept until the thread ends
 *   large              one 8 MiB allocation (above the default threshold), in a scope
 */
#include <errno.h>
#include <inferscope/inferscope.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Keeps the compiler from pairing or eliding allocations. */
static void *volatile sink;

static int family(void)
{
	void *p;
	inferscope_range_push("family");
	sink = malloc(1000);
	free(sink);
	sink = calloc(10, 100);
	sink = realloc(sink, 5000);
	sink = reallocarray(sink, 10, 700);
	free(sink);
	if (posix_memalign(&p, 64, 4096) != 0) {
		return 1;
	}
	free(p);
	sink = aligned_alloc(64, 128);
	free(sink);
	sink = memalign(4096, 100);
	free(sink);
	sink = valloc(100);
	free(sink);
	sink = pvalloc(100);
	free(sink);
	inferscope_range_pop();
	printf("family done\n");
	return 0;
}

static void report(const char *what, int err)
{
	printf("%s: %s\n", what, err ? strerror(err) : "ok");
}

/* volatile: the compiler must not see (and warn about) the impossible sizes */
static volatile size_t huge = SIZE_MAX - 4096, half = SIZE_MAX / 2;

static int errno_checks(void)
{
	void *p = NULL;
	errno = 0;
	sink = malloc(huge);
	report("malloc(huge)", sink ? 0 : errno);
	errno = 0;
	sink = calloc(half, 4);
	report("calloc(overflow)", sink ? 0 : errno);
	errno = 0;
	sink = reallocarray(NULL, half, 4);
	report("reallocarray(overflow)", sink ? 0 : errno);
	errno = 1234;
	int r = posix_memalign(&p, 3, 10);
	printf("posix_memalign(bad alignment): %s, errno kept: %d\n", strerror(r), errno == 1234);
	errno = 4321;
	sink = malloc(16);
	printf("malloc(16) keeps errno: %d\n", errno == 4321);
	free(sink);
	errno = 0;
	sink = realloc(NULL, huge);
	report("realloc(huge)", sink ? 0 : errno);
	return 0;
}

static long per_thread, size;

static void *allocate(void *arg)
{
	void **keep = malloc((size_t)per_thread * sizeof(void *));
	for (long i = 0; i < per_thread; i++) {
		keep[i] = malloc((size_t)size);
		memset(keep[i], 1, (size_t)size);
	}
	for (long i = 0; i < per_thread; i++) {
		free(keep[i]);
	}
	free(keep);
	return arg;
}

static int threads(int n)
{
	pthread_t t[64];
	n = n > 64 ? 64 : n;
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, allocate, NULL);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
	}
	printf("threads done\n");
	return 0;
}

/* Global and not inlined: the stack test looks for its name in the event's stack. */
char *wl_alloc_large(void);
__attribute__((noinline)) char *wl_alloc_large(void)
{
	char *p = malloc(8u << 20);
	memset(p, 1, 8u << 20); /* not 0: gcc would make it a calloc */
	sink = p;
	return p;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "family";
	if (strcmp(mode, "family") == 0) {
		return family();
	}
	if (strcmp(mode, "errno") == 0) {
		return errno_checks();
	}
	if (strcmp(mode, "sample") == 0 && argc > 3) {
		long n = atol(argv[2]);
		size_t sz = (size_t)atol(argv[3]);
		for (long i = 0; i < n; i++) {
			sink = malloc(sz);
			free(sink);
		}
		printf("sampled %ld\n", n);
		return 0;
	}
	if (strcmp(mode, "threads") == 0 && argc > 4) {
		per_thread = atol(argv[3]);
		size = atol(argv[4]);
		return threads(atoi(argv[2]));
	}
	if (strcmp(mode, "large") == 0) {
		inferscope_range_push("large");
		char *p = wl_alloc_large();
		inferscope_range_pop();
		free(p);
		printf("large done\n");
		return 0;
	}
	fprintf(stderr, "usage: wl-alloc family|errno|sample N SIZE|threads T N SIZE|large\n");
	return 2;
}
