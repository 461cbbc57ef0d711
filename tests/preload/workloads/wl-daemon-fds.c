/* SPDX-License-Identifier: MIT */
/*
 * What daemons do to descriptors they did not open, between two bursts of events.
 * Usage: wl-daemon-fds MODE N
 *   MODE: close_range | close_loop | dup2_all | rlimit8 | list
 * Records N "before" scopes, lets the collector spill them (a few ticks), applies
 * MODE, records N "after" scopes, lets it spill again, and exits 0. "list" prints
 * every descriptor open in steady state that was not open when main started (the
 * test runner's own are inherited) or that names a file of ours, as "fd N -> target".
 */
#include <inferscope/inferscope.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#include <linux/close_range.h>
#endif
#include <sys/syscall.h>

static void burst(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		inferscope_range_push(name);
		inferscope_range_pop();
	}
}

/* Several collector ticks (10 ms each by default): what was recorded is spilled. */
static void settle(void)
{
	struct timespec ts = { 0, 60 * 1000000L };
	nanosleep(&ts, NULL);
}

static bool at_start[1024];

static void note_start_fds(void)
{
	for (int fd = 0; fd < 1024; fd++) {
		at_start[fd] = fcntl(fd, F_GETFD) >= 0;
	}
}

static int list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL) {
		perror("opendir");
		return 1;
	}
	int mine = dirfd(d), extra = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd == mine) {
			continue;
		}
		char link[64], target[4096];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		bool ours = strstr(target, ".spill") || strstr(target, "trace") ||
			    strstr(target, "inferscope");
		if (fd < 1024 && at_start[fd] && !ours) {
			continue;
		}
		printf("fd %d -> %s\n", fd, target);
		extra++;
	}
	closedir(d);
	printf("extra fds: %d\n", extra);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s MODE N\n", argv[0]);
		return 2;
	}
	const char *mode = argv[1];
	int n = atoi(argv[2]);
	note_start_fds();
	burst("before", n);
	settle();
	if (strcmp(mode, "close_range") == 0) {
		if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) {
			perror("close_range");
			return 1;
		}
	} else if (strcmp(mode, "close_loop") == 0) {
		for (int fd = 3; fd < 1024; fd++) {
			close(fd);
		}
	} else if (strcmp(mode, "dup2_all") == 0) {
		/* every open descriptor above 2 becomes /dev/null, as detaching daemons do */
		int null = open("/dev/null", O_RDWR);
		for (int fd = 3; fd < 1024; fd++) {
			if (fd != null && fcntl(fd, F_GETFD) >= 0) {
				dup2(null, fd);
			}
		}
		close(null);
	} else if (strcmp(mode, "rlimit8") == 0) {
		for (int fd = 3; fd < 1024; fd++) {
			close(fd);
		}
		struct rlimit rl = { 8, 8 };
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			perror("setrlimit");
			return 1;
		}
		/* the program uses most of what it has: 0-5, leaving two */
		for (int i = 0; i < 3; i++) {
			if (open("/dev/null", O_RDONLY) < 0) {
				perror("open");
				return 1;
			}
		}
	} else if (strcmp(mode, "list") == 0) {
		return list_fds();
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	burst("after", n);
	settle();
	printf("done %s\n", mode);
	return 0;
}
