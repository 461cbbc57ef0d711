/* SPDX-License-Identifier: MIT */
/*
 * System calls and waits under the preload. Usage: wl-syscalls MODE
 *   io        pipe write/read, a file written, fsync'ed, read back, closed
 *   slow      a 20 ms nanosleep, a 15 ms poll timeout, a 20 ms blocking read
 *   errors    failing calls: read(-1), open of a missing file, close(-1)
 *   waits     a contended mutex, a condition variable and a semaphore, each ~20 ms
 *   uncontended 1000 lock/unlock pairs on a free mutex
 *   count N   N one-byte reads from /dev/zero
 *   threads T N  T threads, each N one-byte reads from /dev/zero
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void ms_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int io(const char *dir)
{
	int p[2];
	char buf[64], path[4096];
	if (pipe(p) != 0 || write(p[1], "hello", 5) != 5 || read(p[0], buf, sizeof(buf)) != 5) {
		return 1;
	}
	close(p[0]);
	close(p[1]);
	snprintf(path, sizeof(path), "%s/wl-syscalls.tmp", dir);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	if (fd < 0 || write(fd, "0123456789", 10) != 10 || fsync(fd) != 0 || close(fd) != 0) {
		return 1;
	}
	fd = openat(AT_FDCWD, path, O_RDONLY);
	ssize_t n = pread(fd, buf, sizeof(buf), 2);
	close(fd);
	unlink(path);
	printf("io done, pread %zd\n", n);
	return 0;
}

static void *late_writer(void *arg)
{
	ms_sleep(20);
	if (write(*(int *)arg, "x", 1) != 1) {
		abort();
	}
	return NULL;
}

/* Global and not inlined: the stack test looks for its name in the event's stack. */
void wl_slow_sleep(void);
__attribute__((noinline)) void wl_slow_sleep(void)
{
	ms_sleep(20);
	__asm__ volatile("" ::: "memory");
}

static int slow(void)
{
	int p[2];
	char c;
	pthread_t t;
	wl_slow_sleep();
	struct pollfd none = { -1, 0, 0 };
	poll(&none, 1, 15);
	if (pipe(p) != 0) {
		return 1;
	}
	pthread_create(&t, NULL, late_writer, &p[1]);
	ssize_t n = read(p[0], &c, 1);
	pthread_join(t, NULL);
	printf("slow done, read %zd\n", n);
	return 0;
}

static int errors(void)
{
	char c;
	errno = 0;
	ssize_t r = read(-1, &c, 1);
	printf("read(-1): %zd %s\n", r, strerror(errno));
	errno = 0;
	int fd = open("/nonexistent/file", O_RDONLY);
	printf("open(missing): %d %s\n", fd, strerror(errno));
	errno = 0;
	int k = close(-1);
	printf("close(-1): %d %s\n", k, strerror(errno));
	errno = 77;
	r = write(1, "", 0);
	printf("write(1, 0 bytes): %zd errno kept %d\n", r, errno == 77);
	return 0;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static int ready;

static void *holder(void *arg)
{
	pthread_mutex_lock(&m);
	ready = 1;
	ms_sleep(20); /* main blocks on m meanwhile */
	pthread_mutex_unlock(&m);
	ms_sleep(20);
	pthread_mutex_lock(&m);
	ready = 2;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	ms_sleep(20);
	sem_post(&sem);
	return arg;
}

static int waits(void)
{
	pthread_t t;
	sem_init(&sem, 0, 0);
	pthread_create(&t, NULL, holder, NULL);
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) == 0) {
		ms_sleep(1);
	}
	pthread_mutex_lock(&m); /* contended: the holder keeps it ~20 ms */
	while (ready != 2) {
		pthread_cond_wait(&cv, &m);
	}
	pthread_mutex_unlock(&m);
	sem_wait(&sem);
	pthread_join(t, NULL);
	printf("waits done\n");
	return 0;
}

static void *reader(void *arg)
{
	long n = *(const long *)arg;
	char c;
	int fd = open("/dev/zero", O_RDONLY);
	for (long i = 0; i < n && fd >= 0; i++) {
		if (read(fd, &c, 1) != 1) {
			abort();
		}
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "io";
	if (strcmp(mode, "io") == 0) {
		return io(argc > 2 ? argv[2] : ".");
	}
	if (strcmp(mode, "slow") == 0) {
		return slow();
	}
	if (strcmp(mode, "errors") == 0) {
		return errors();
	}
	if (strcmp(mode, "waits") == 0) {
		return waits();
	}
	if (strcmp(mode, "uncontended") == 0) {
		for (int i = 0; i < 1000; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		printf("uncontended done\n");
		return 0;
	}
	if (strcmp(mode, "count") == 0 && argc > 2) {
		char c;
		long n = atol(argv[2]);
		int fd = open("/dev/zero", O_RDONLY);
		for (long i = 0; i < n; i++) {
			if (read(fd, &c, 1) != 1) {
				return 1;
			}
		}
		close(fd);
		printf("count %ld\n", n);
		return 0;
	}
	if (strcmp(mode, "threads") == 0 && argc > 3) {
		int k = atoi(argv[2]);
		long n = atol(argv[3]);
		pthread_t t[64];
		for (int i = 0; i < k && i < 64; i++) {
			pthread_create(&t[i], NULL, reader, &n);
		}
		for (int i = 0; i < k && i < 64; i++) {
			pthread_join(t[i], NULL);
		}
		printf("threads %d x %ld\n", k, n);
		return 0;
	}
	fprintf(stderr,
		"usage: wl-syscalls io|slow|errors|waits|uncontended|count N|threads T N\n");
	return 2;
}
