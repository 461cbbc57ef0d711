/* SPDX-License-Identifier: MIT */
/*
 * A short system call in a tight loop: read(2) of one byte from /dev/zero, far
 * below the event threshold, so the hook's cost is two clock reads and one
 * aggregate update. Also an uncontended pthread_mutex_lock/unlock pair, which the
 * hook must leave at its native cost (trylock first, no clock).
 * Prints "short_syscall_ns <value>" and "mutex_pair_ns <value>".
 *
 * With "threaded", an idle thread is started first. glibc takes cheaper paths in
 * a single-threaded process (no cancellation bookkeeping around system calls, no
 * atomic in an uncontended lock), and the preload's collector thread makes every
 * process multi-threaded: comparing threaded runs isolates the hooks' own cost.
 * Usage: bench-syscall [CALLS [threaded]]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double best_of(int rounds, long calls, int fd, pthread_mutex_t *m)
{
	char c;
	double best = 1e30;
	for (int round = 0; round < rounds; round++) {
		double t0 = now_ns();
		for (long i = 0; i < calls; i++) {
			if (m) {
				pthread_mutex_lock(m);
				pthread_mutex_unlock(m);
			} else if (read(fd, &c, 1) != 1) {
				exit(1);
			}
		}
		double per = (now_ns() - t0) / (double)calls;
		best = per < best ? per : best;
	}
	return best;
}

static void *idle(void *arg)
{
	pause();
	return arg;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 2000000;
	pthread_t t;
	if (argc > 2 && strcmp(argv[2], "threaded") == 0) {
		pthread_create(&t, NULL, idle, NULL);
	}
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	int fd = open("/dev/zero", O_RDONLY);
	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	best_of(1, calls / 10, fd, NULL);
	printf("short_syscall_ns %.2f\n", best_of(5, calls / 5, fd, NULL));
	printf("mutex_pair_ns %.2f\n", best_of(5, calls * 5, fd, &m));
	close(fd);
	return 0;
}
