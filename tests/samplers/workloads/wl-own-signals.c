/* SPDX-License-Identifier: MIT */
/*
 * A program with its own profiler signal: "prof" counts SIGPROF from
 * setitimer(ITIMER_PROF), "alarm" counts SIGALRM from setitimer(ITIMER_REAL), while
 * it computes for about 300 ms of CPU time. Prints the count and a checksum that does
 * not depend on timing; exits 0 when its handler ran.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t hits;

static void on_signal(int sig)
{
	(void)sig;
	hits++;
}

static unsigned long cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000ul + (unsigned long)ts.tv_nsec / 1000000ul;
}

int main(int argc, char **argv)
{
	int alarm_mode = argc > 1 && strcmp(argv[1], "alarm") == 0;
	int sig = alarm_mode ? SIGALRM : SIGPROF;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	setitimer(alarm_mode ? ITIMER_REAL : ITIMER_PROF, &it, NULL);
	unsigned long x = 1, end = cpu_ms() + 300;
	unsigned long loops = 0;
	while (cpu_ms() < end || loops < 1000) {
		for (int i = 0; i < 10000; i++) {
			x = x * 6364136223846793005ul + 1;
		}
		loops++;
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(alarm_mode ? ITIMER_REAL : ITIMER_PROF, &off, NULL);
	struct sigaction now;
	sigaction(sig, NULL, &now);
	printf("%s handler=%s hits>0=%d\n", alarm_mode ? "alarm" : "prof",
	       now.sa_handler == on_signal ? "mine" : "changed", hits > 0);
	return hits > 0 ? 0 : 1;
}
