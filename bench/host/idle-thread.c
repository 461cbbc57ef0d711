/* SPDX-License-Identifier: MIT */
/*
 * A preloadable library that starts one thread which sleeps forever. It isolates
 * what any background thread costs a single-threaded program - glibc then takes
 * its thread-safe paths (arena locks in malloc, cancellation checks around system
 * calls) - from what the hooks themselves cost: the benchmark tables show both.
 */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg)
{
	for (;;) {
		pause();
	}
	return arg;
}

__attribute__((constructor)) static void start_idle_thread(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, idle, NULL) == 0) {
		pthread_detach(t);
	}
}
