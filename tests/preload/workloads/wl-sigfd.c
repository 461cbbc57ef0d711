/* SPDX-License-Identifier: MIT */
/*
 * A daemon that blocks every signal and reads them from a signalfd, as systemd-style
 * services do, while it and a second thread compute. Usage: wl-sigfd MS
 * Prints "signals N last S pending P": signals read from the signalfd (0: no one sends
 * it any), the last one's number, and signals still pending at the end.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;
static long worker_ms;

/* ms of the calling thread's CPU time */
static void burn(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (;;) {
		for (int i = 0; i < 100000; i++) {
			sink += i * 0.5;
		}
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		if ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 >= ms) {
			return;
		}
	}
}

static void *worker(void *p)
{
	(void)p;
	burn(worker_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;
	worker_ms = ms;
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	int fd = signalfd(-1, &all, SFD_CLOEXEC);
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	unsigned got = 0;
	int last = 0;
	for (int round = 0; round < 10; round++) {
		burn(ms / 10);
		struct pollfd p = { fd, POLLIN, 0 };
		while (poll(&p, 1, 10) > 0) {
			struct signalfd_siginfo si;
			if (read(fd, &si, sizeof(si)) == sizeof(si)) {
				got++;
				last = (int)si.ssi_signo;
			}
		}
	}
	pthread_join(th, NULL);
	sigset_t pend;
	sigpending(&pend);
	int pending = 0;
	for (int s = 1; s < 65; s++) {
		pending += sigismember(&pend, s) == 1;
	}
	printf("signals %u last %d pending %d\n", got, last, pending);
	return 0;
}
