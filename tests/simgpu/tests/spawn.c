/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/simgpu/tests/spawn.h"

extern char **environ;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool replaced(const char *var, const char *const *env)
{
	size_t n = strcspn(var, "=");

	for (; env && *env; env++) {
		if (strncmp(*env, var, n) == 0 && (*env)[n] == '=') {
			return true;
		}
	}
	return false;
}

static char **merge_env(const char *const *env)
{
	size_t n = 0;
	size_t m = 0;
	char **out;
	size_t i;

	while (environ[n]) {
		n++;
	}
	while (env && env[m]) {
		m++;
	}
	out = calloc(n + m + 1, sizeof(*out));
	if (!out) {
		return NULL;
	}
	m = 0;
	for (i = 0; environ[i]; i++) {
		if (!replaced(environ[i], env)) {
			out[m++] = environ[i];
		}
	}
	for (i = 0; env && env[i]; i++) {
		out[m++] = (char *)env[i];
	}
	return out;
}

static void drain(int fd, struct wl_run *run)
{
	size_t got = 0;
	char sink[4096];
	ssize_t n;

	for (;;) {
		size_t room = sizeof(run->output) - 1 - got;

		n = read(fd, room ? run->output + got : sink, room ? room : sizeof(sink));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		if (room) {
			got += (size_t)n;
		}
	}
	run->output[got] = '\0';
}

int wl_spawn(const char *const *argv, const char *const *env, struct wl_run *run)
{
	posix_spawn_file_actions_t actions;
	char **envp = merge_env(env);
	struct rusage usage;
	int fds[2];
	pid_t pid;
	int status = 0;
	int err;
	uint64_t start;

	memset(run, 0, sizeof(*run));
	if (!envp || pipe(fds) != 0) {
		free(envp);
		return -errno;
	}
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
	posix_spawn_file_actions_addclose(&actions, fds[0]);
	start = now_ns();
	err = posix_spawn(&pid, argv[0], &actions, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	free(envp);
	if (err) {
		close(fds[0]);
		return -err;
	}
	drain(fds[0], run);
	close(fds[0]);
	while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
		continue;
	}
	run->wall_ns = now_ns() - start;
	run->cpu_ns = (uint64_t)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000u +
		      (uint64_t)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000u;
	run->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}
