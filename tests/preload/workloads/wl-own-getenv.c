/* SPDX-License-Identifier: MIT */
/*
 * A program with its own getenv, as bash has (over hash tables it changes unlocked):
 * the library must never call it from a thread of its own. It counts calls from any
 * thread but the main one, forks a few times (the library's threads stop and start
 * again around each fork) and prints "foreign getenv N".
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static _Atomic int foreign;

char *getenv(const char *name)
{
	if (syscall(SYS_gettid) != getpid()) {
		atomic_fetch_add(&foreign, 1);
	}
	size_t n = strlen(name);
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
			return *e + n + 1;
		}
	}
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int main(void)
{
	sleep_ms(300); /* the collector's ticks start the control socket meanwhile */
	for (int i = 0; i < 3; i++) {
		pid_t c = fork();
		if (c == 0) {
			_exit(0);
		}
		waitpid(c, NULL, 0);
		for (int k = 0; k < 30; k++) {
			sleep_ms(10); /* hooked calls: the threads come back */
		}
	}
	printf("foreign getenv %d\n", atomic_load(&foreign));
	return 0;
}
