/* SPDX-License-Identifier: MIT */
/*
 * A bit of everything a real program does, with deterministic output, to be run
 * with and without the preload and compared: many threads allocating and writing
 * to a pipe, fork (with an exit status), exec, posix_spawn, signals interrupting a
 * blocking read (EINTR) and restarting one (SA_RESTART), a handler that writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define THREADS 16
#define ROUNDS 2000

static int out_pipe[2];

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long sum = 0;
	for (int i = 0; i < ROUNDS; i++) {
		size_t n = (size_t)(16 + (i * 37 + id) % 2000);
		unsigned char *p = malloc(n);
		memset(p, (int)(i & 0xff), n);
		sum += p[n / 2] + n;
		p = realloc(p, n * 2);
		free(p);
	}
	char line[64];
	int len = snprintf(line, sizeof(line), "%ld %lu\n", id, sum);
	if (write(out_pipe[1], line, (size_t)len) != len) {
		abort();
	}
	return (void *)sum;
}

static unsigned long threads(void)
{
	pthread_t t[THREADS];
	unsigned long total = 0;
	if (pipe(out_pipe) != 0) {
		exit(1);
	}
	for (long i = 0; i < THREADS; i++) {
		pthread_create(&t[i], NULL, worker, (void *)i);
	}
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (unsigned long)r;
	}
	close(out_pipe[1]);
	char buf[4096];
	size_t got = 0;
	ssize_t k;
	while ((k = read(out_pipe[0], buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)k;
	}
	close(out_pipe[0]);
	buf[got] = '\0';
	size_t lines = 0;
	for (size_t i = 0; i < got; i++) {
		lines += buf[i] == '\n';
	}
	printf("threads: %zu lines, total %lu\n", lines, total);
	return total;
}

static void processes(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		void *p = malloc(1 << 20);
		memset(p, 1, 1 << 20);
		free(p);
		_exit(7);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("fork child exited %d\n", WEXITSTATUS(st));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/bin/echo", "echo", "exec child says hi", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("exec child exited %d\n", WEXITSTATUS(st));
	fflush(stdout);
	char *argv[] = { "sh", "-c", "exit 5", NULL };
	if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) == 0) {
		waitpid(pid, &st, 0);
		printf("spawned child exited %d\n", WEXITSTATUS(st));
	}
}

static int sig_pipe[2];

static void on_alarm(int sig)
{
	int saved = errno;
	/* write(2) from a handler: the hook must stay async-signal-safe */
	if (write(sig_pipe[1], "s", 1) != 1) {
		abort();
	}
	(void)sig;
	errno = saved;
}

static void one_alarm(bool restart, const char *what)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	char c = 0;
	errno = 0;
	ssize_t r = read(sig_pipe[0], &c, 1);
	printf("%s: read %zd '%c' errno %s\n", what, r, c ? c : '-', r < 0 ? strerror(errno) : "-");
	if (r < 0 && read(sig_pipe[0], &c, 1) != 1) {
		abort(); /* the handler's byte is still there */
	}
}

static void signals(void)
{
	if (pipe(sig_pipe) != 0) {
		exit(1);
	}
	one_alarm(false, "no SA_RESTART");
	one_alarm(true, "SA_RESTART");
	close(sig_pipe[0]);
	close(sig_pipe[1]);
}

int main(void)
{
	threads();
	processes();
	signals();
	printf("done\n");
	return 3;
}
