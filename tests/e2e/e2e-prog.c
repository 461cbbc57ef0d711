/* SPDX-License-Identifier: MIT */
/*
 * The command the end-to-end tests run under `inferscope run`: one small behaviour per
 * mode, so that each test says exactly what the launcher must do with it.
 *
 *   e2e-prog exit N            exit with status N
 *   e2e-prog raise SIG         die of signal SIG (a number)
 *   e2e-prog work MS           an annotated scope computing for MS ms, then a line
 *   e2e-prog fork MS           the same in a child process and in the parent
 *   e2e-prog wait-signal DIR   write DIR/ready, append each signal's number to DIR/got,
 *                              exit 7 after SIGTERM
 *   e2e-prog env NAME...       print NAME=VALUE of each variable
 *   e2e-prog maps TEXT         print the path of each mapped file whose path holds TEXT
 *
 * The annotations come from the public header: no-ops without the preload, and what
 * makes the preload write a trace for the process.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inferscope/inferscope.h"

static volatile sig_atomic_t got_term;
static int got_fd = -1;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void work(const char *scope, int ms)
{
	inferscope_range_push(scope);
	volatile unsigned long x = 0;
	double end = now_ms() + ms;
	while (now_ms() < end) {
		for (int i = 0; i < 10000; i++) {
			x += (unsigned long)i * 2654435761u;
		}
	}
	inferscope_range_pop();
}

static void on_signal(int sig)
{
	char line[16];
	int n = snprintf(line, sizeof(line), "%d\n", sig);
	if (write(got_fd, line, (size_t)n) < 0) {
		_exit(99);
	}
	got_term |= sig == SIGTERM;
}

static int wait_signal(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/got", dir);
	got_fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
	}
	snprintf(path, sizeof(path), "%s/ready", dir);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (got_fd < 0 || fd < 0) {
		return 98;
	}
	close(fd);
	/* bounded, so that a launcher that never forwards fails the test instead of
	 * hanging it */
	for (int i = 0; i < 3000 && !got_term; i++) {
		usleep(10000);
	}
	return got_term ? 7 : 97;
}

static int fork_work(int ms)
{
	pid_t pid = fork();
	if (pid == 0) {
		work("e2e_child", ms);
		printf("e2e child done\n");
		return 0;
	}
	work("e2e_parent", ms);
	int st = 0;
	waitpid(pid, &st, 0);
	printf("e2e parent done\n");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* Which copy of a library the loader took: the tests install one and preload it by
 * name. */
static int maps(const char *text)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[8192], last[8192] = "";
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *path = strchr(line, '/');
		if (path != NULL && strstr(path, text) != NULL && strcmp(path, last) != 0) {
			fputs(path, stdout);
			snprintf(last, sizeof(last), "%s", path);
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "0";
	if (strcmp(mode, "exit") == 0) {
		return atoi(arg);
	}
	if (strcmp(mode, "raise") == 0) {
		signal(atoi(arg), SIG_DFL);
		raise(atoi(arg));
		return 96;
	}
	if (strcmp(mode, "work") == 0) {
		work("e2e_work", atoi(arg));
		printf("e2e work done\n");
		return 0;
	}
	if (strcmp(mode, "fork") == 0) {
		return fork_work(atoi(arg));
	}
	if (strcmp(mode, "wait-signal") == 0 && argc > 2) {
		return wait_signal(arg);
	}
	if (strcmp(mode, "maps") == 0) {
		return maps(arg);
	}
	if (strcmp(mode, "env") == 0) {
		for (int i = 2; i < argc; i++) {
			const char *v = getenv(argv[i]);
			printf("%s=%s\n", argv[i], v ? v : "(unset)");
		}
		return 0;
	}
	fprintf(stderr, "usage: e2e-prog exit N | raise SIG | work MS | fork MS | "
			"wait-signal DIR | env NAME... | maps TEXT\n");
	return 2;
}
