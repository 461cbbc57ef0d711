/* SPDX-License-Identifier: MIT */
/*
 * Allocator churn on two threads, the host hooks' worst case that is still a program:
 * each thread makes CALLS allocations of 16 to 1039 bytes (a fixed pseudo-random
 * sequence per thread), writes into each block, keeps it in a ring of 256 live blocks
 * and frees the one it replaces (so blocks live a while, as a parser's or a server's
 * do, not only glibc's tcache pair), and makes one short system call - read(2) of 64
 * bytes from /dev/zero - every 64 allocations. Prints a checksum, the same with and
 * without any tool. Usage: bench-churn [CALLS_PER_THREAD [THREADS]]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING 256

struct job {
	long calls;
	unsigned seed;
	int fd;
	uint64_t sum;
};

static void *churn(void *arg)
{
	struct job *j = arg;
	void *ring[RING] = { 0 };
	uint64_t x = j->seed, sum = 0;
	char buf[64];
	for (long i = 0; i < j->calls; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		size_t n = 16 + (size_t)(x >> 33) % 1024;
		unsigned slot = (unsigned)(x >> 20) % RING;
		free(ring[slot]);
		char *p = malloc(n);
		if (p == NULL) {
			abort();
		}
		memset(p, (int)i, 16);
		p[n - 1] = (char)n;
		ring[slot] = p;
		sum += (unsigned char)p[n - 1];
		if (i % 64 == 0 && read(j->fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf)) {
			sum += (unsigned char)buf[0];
		}
	}
	for (unsigned k = 0; k < RING; k++) {
		free(ring[k]);
	}
	j->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 5000000;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	if (calls <= 0 || threads <= 0 || threads > 64) {
		fprintf(stderr, "usage: bench-churn [CALLS_PER_THREAD [THREADS (1-64)]]\n");
		return 2;
	}
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	pthread_t tid[64];
	struct job jobs[64];
	for (int k = 0; k < threads; k++) {
		jobs[k] = (struct job){ calls, 12345u + (unsigned)k, fd, 0 };
		if (pthread_create(&tid[k], NULL, churn, &jobs[k]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	uint64_t sum = 0;
	for (int k = 0; k < threads; k++) {
		pthread_join(tid[k], NULL);
		sum += jobs[k].sum;
	}
	close(fd);
	printf("checksum %llu\n", (unsigned long long)sum);
	return 0;
}
