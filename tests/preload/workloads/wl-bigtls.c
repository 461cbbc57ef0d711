/* SPDX-License-Identifier: MIT */
/*
 * A program linked with a library of 120 KiB of TLS (wl-bigtls-lib.c): it allocates,
 * reads a file and starts a thread of its own, so that the library's threads (the
 * collector, the control socket's listener, the private writer) all run beside it.
 * Prints "ok N" with what its own thread and the main thread computed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

size_t wl_bigtls_touch(size_t i);

static void *worker(void *arg)
{
	size_t n = 0;
	for (size_t i = 0; i < 1000; i++) {
		void *p = malloc(64 + i);
		n += wl_bigtls_touch(i) + (p != NULL);
		free(p);
	}
	*(size_t *)arg = n;
	return NULL;
}

int main(void)
{
	size_t n = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, worker, &n) != 0 || pthread_join(th, NULL) != 0) {
		return 2;
	}
	char buf[64];
	int fd = open("/proc/self/stat", O_RDONLY);
	n += fd >= 0 && read(fd, buf, sizeof(buf)) > 0;
	if (fd >= 0) {
		close(fd);
	}
	usleep(50 * 1000); /* the collector and the listener are up by now */
	printf("ok %zu\n", n + wl_bigtls_touch(1));
	return 0;
}
