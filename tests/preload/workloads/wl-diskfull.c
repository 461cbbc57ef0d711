/* SPDX-License-Identifier: MIT */
/*
 * What the library cannot write. Usage: wl-diskfull MODE N
 *   fsize_lift: RLIMIT_FSIZE of 64 KiB (SIGXFSZ ignored) while N "during" scopes are
 *               recorded and spilled (the spill cannot grow), then the limit is
 *               lifted and N "after" scopes follow: every one must reach the trace.
 *   fsize_stay: the same limit to the end: no trace can be written; what is lost must
 *               be counted beside it.
 *   nofile3:    setrlimit(RLIMIT_NOFILE, 3) after N "before" scopes, then N "after".
 * Prints "done MODE".
 */
#include <inferscope/inferscope.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void burst(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		inferscope_range_push(name);
		inferscope_range_pop();
	}
}

/* Several collector ticks (10 ms each by default): the collector tries to spill. */
static void settle(void)
{
	struct timespec ts = { 0, 60 * 1000000L };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fsize_lift";
	int n = argc > 2 ? atoi(argv[2]) : 20000;
	struct rlimit old, lim;
	if (strncmp(mode, "fsize", 5) == 0) {
		signal(SIGXFSZ, SIG_IGN);
		getrlimit(RLIMIT_FSIZE, &old);
		lim = old;
		lim.rlim_cur = 64 * 1024;
		setrlimit(RLIMIT_FSIZE, &lim);
		burst("during", n);
		settle();
		if (strcmp(mode, "fsize_lift") == 0) {
			setrlimit(RLIMIT_FSIZE, &old);
		}
		burst("after", n);
		settle();
	} else {
		burst("before", n);
		settle();
		lim.rlim_cur = lim.rlim_max = 3;
		setrlimit(RLIMIT_NOFILE, &lim);
		burst("after", n);
		settle();
	}
	printf("done %s\n", mode);
	return 0;
}
