/* SPDX-License-Identifier: MIT */
/*
 * Blocking calls under CPU sampling: a thread alternates CPU work with blocking
 * read (pipe), nanosleep, poll, select, epoll_wait, sem_wait, pthread_cond_wait and
 * waitpid, while a second thread computes and feeds the pipe. Every call that
 * returns EINTR is counted; the program prints "eintr=N" and exits 1 when N > 0.
 * None of these calls is restarted by SA_RESTART when interrupted (poll, select,
 * nanosleep, epoll_wait, sem_wait) or all are (read, waitpid): a sampler whose
 * signal interrupted them would show here.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static sem_t sem;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;
static volatile unsigned long sink;
static int eintr;

static void work(unsigned n)
{
	unsigned long x = sink;
	for (unsigned i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1;
	}
	sink = x;
}

static void check(long r, const char *what)
{
	if (r < 0 && errno == EINTR) {
		eintr++;
		fprintf(stderr, "EINTR from %s\n", what);
	}
}

static void *feeder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		work(300000);
		char c = 'x';
		if (write(fds[1], &c, 1) != 1) {
			break;
		}
		sem_post(&sem);
		pthread_mutex_lock(&mu);
		ready++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(void)
{
	if (pipe(fds) != 0 || sem_init(&sem, 0, 0) != 0) {
		return 2;
	}
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[0] };
	epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev);
	pthread_t t;
	pthread_create(&t, NULL, feeder, NULL);
	for (int i = 0; i < 200; i++) {
		work(200000);
		struct pollfd p = { fds[0], POLLIN, 0 };
		check(poll(&p, 1, 1000), "poll");
		struct epoll_event out;
		check(epoll_wait(ep, &out, 1, 1000), "epoll_wait");
		fd_set set;
		FD_ZERO(&set);
		FD_SET(fds[0], &set);
		struct timeval tv = { 1, 0 };
		check(select(fds[0] + 1, &set, NULL, NULL, &tv), "select");
		char c;
		check(read(fds[0], &c, 1), "read");
		check(sem_wait(&sem), "sem_wait");
		pthread_mutex_lock(&mu);
		while (ready <= i) {
			pthread_cond_wait(&cv, &mu);
		}
		pthread_mutex_unlock(&mu);
		struct timespec ts = { 0, 100000 };
		check(nanosleep(&ts, NULL), "nanosleep");
		if (i % 50 == 0) {
			pid_t pid = fork();
			if (pid == 0) {
				work(2000000);
				_exit(0);
			}
			int st;
			check(waitpid(pid, &st, 0), "waitpid");
		}
	}
	pthread_join(t, NULL);
	printf("eintr=%d\n", eintr);
	return eintr ? 1 : 0;
}
