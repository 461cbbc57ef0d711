/*
 * A long-running server for the flight recorder and capture tests: steps (an outermost
 * scope "step") in a loop until killed or its time is up.
 * Usage: wl-server SLEEP_US MARKS_PER_STEP SECONDS [abort|fork|spin]
 *   SLEEP_US        pause inside each step (0: none)
 *   MARKS_PER_STEP  instant events recorded inside each step (the event load)
 *   SECONDS         exits normally after this long
 *   abort           calls abort() instead of exiting (a crash)
 *   fork            forks a worker first that runs the same loop (a two-process server)
 *   spin            computes instead of pausing, in a function named as C++ mangles
 *                   segsymbols::burn(long) (the CPU samples' stacks name it)
 * Prints "ready <pid>" once the first step ended (the worker, forked, prints nothing).
 */
#include <inferscope/inferscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Linked under a C++ name: the stacks show it demangled. */
__attribute__((noinline)) double burn(long us) __asm__("_ZN10segsymbols4burnEl");

double burn(long us)
{
	volatile double x = 1;
	double until = now_s() + us / 1e6;
	while (now_s() < until) {
		for (int i = 0; i < 1000; i++) {
			x = x * 1.0000001 + 1e-9;
		}
	}
	return x;
}

int main(int argc, char **argv)
{
	long sleep_us = argc > 1 ? atol(argv[1]) : 1000;
	long marks = argc > 2 ? atol(argv[2]) : 1;
	double secs = argc > 3 ? atof(argv[3]) : 10;
	const char *mode = argc > 4 ? argv[4] : "";
	double end = now_s() + secs;
	unsigned long step = 0;
	pid_t worker = strcmp(mode, "fork") == 0 ? fork() : -1;
	while (now_s() < end) {
		inferscope_range_push("step");
		inferscope_range_push("work");
		for (long i = 0; i < marks; i++) {
			inferscope_mark("tick");
		}
		if (sleep_us > 0 && strcmp(mode, "spin") == 0) {
			burn(sleep_us);
		} else if (sleep_us > 0) {
			usleep((useconds_t)sleep_us);
		}
		inferscope_range_pop();
		inferscope_range_pop();
		if (step++ == 0 && worker != 0) {
			printf("ready %d\n", (int)getpid());
			fflush(stdout);
		}
	}
	if (worker == 0) {
		return 0;
	}
	if (worker > 0) {
		waitpid(worker, NULL, 0);
	}
	if (strcmp(mode, "abort") == 0) {
		abort();
	}
	printf("steps %lu\n", step);
	return 0;
}
