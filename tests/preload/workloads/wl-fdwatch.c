/* SPDX-License-Identifier: MIT */
/*
 * Watches its own descriptor table while the library spills, snapshots and exits.
 * Usage: wl-fdwatch parent ROUNDS | wl-fdwatch child
 *   parent: three threads list /proc/self/fd in a tight loop (each with a directory
 *   descriptor opened before any listing starts) while the main thread records scope
 *   bursts that the collector spills, asks for snapshots (inferscope_flush), and
 *   spawns children (posix_spawn, fork + exec) that list theirs; then it exits with
 *   the listers still running (the exit's flush writes the trace meanwhile).
 *   child: records a burst and lists its table a few hundred times.
 * Every descriptor seen that was neither open when main started nor the program's own
 * is printed at once as "UNEXPECTED fd N -> target"; "done" ends a parent that ran.
 */
#include <inferscope/inferscope.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LISTERS 3
#define MAX_FD 4096

extern char **environ;

static bool allowed[MAX_FD];
static _Atomic int ready;

static void note_start_fds(void)
{
	for (int fd = 0; fd < MAX_FD; fd++) {
		allowed[fd] = fcntl(fd, F_GETFD) >= 0;
	}
}

static void report(int fd)
{
	char path[64], target[256], line[400];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	int len = snprintf(line, sizeof(line), "UNEXPECTED fd %d -> %s\n", fd, target);
	ssize_t w = write(1, line, (size_t)len); /* now: the process may be ending */
	(void)w;
}

/* One listing through dir (rewound), without malloc or stdio. */
static void list_once(int dir)
{
	char buf[8192];
	long n;
	lseek(dir, 0, SEEK_SET);
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				unsigned long long ino;
				long long off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			off += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9') {
				continue;
			}
			int fd = atoi(d->name);
			if (fd >= MAX_FD || !allowed[fd]) {
				report(fd);
			}
		}
	}
}

static void *lister(void *p)
{
	int dir = (int)(long)p;
	atomic_fetch_add(&ready, 1);
	for (;;) {
		list_once(dir);
	}
	return NULL;
}

static void burst(int n)
{
	for (int i = 0; i < n; i++) {
		inferscope_range_push("work");
		inferscope_range_pop();
	}
}

static void spawn_child(const char *self, bool use_fork)
{
	char *argv[] = { (char *)self, "child", NULL };
	pid_t pid;
	if (use_fork) {
		pid = fork();
		if (pid == 0) {
			execv(self, argv);
			_exit(127);
		}
	} else if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0) {
		pid = -1;
	}
	if (pid > 0) {
		waitpid(pid, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	note_start_fds();
	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		allowed[dir] = true;
		for (int i = 0; i < 300; i++) {
			burst(200);
			list_once(dir);
		}
		return 0;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	pthread_t th[LISTERS];
	int dirs[LISTERS];
	for (int i = 0; i < LISTERS; i++) {
		dirs[i] = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		allowed[dirs[i]] = true;
	}
	for (int i = 0; i < LISTERS; i++) {
		pthread_create(&th[i], NULL, lister, (void *)(long)dirs[i]);
	}
	while (atomic_load(&ready) < LISTERS) {
		sched_yield();
	}
	for (int r = 0; r < rounds; r++) {
		burst(5000);
		struct timespec ts = { 0, 20 * 1000000L }; /* collector ticks: spills */
		nanosleep(&ts, NULL);
		if (r % 5 == 0) {
			inferscope_flush();
		}
		if (r % 5 == 2) {
			spawn_child(argv[0], r % 10 == 2);
		}
	}
	ssize_t w = write(1, "done\n", 5);
	(void)w;
	exit(0); /* the listers still run while the trace is written */
}
