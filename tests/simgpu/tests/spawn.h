/* SPDX-License-Identifier: MIT */
/*
 * Running a workload as a child process with a chosen environment, collecting
 * its output, exit status, wall time and CPU time.
 */
#ifndef WL_SPAWN_H
#define WL_SPAWN_H

#include <stdint.h>

struct wl_run {
	int status;	    /* exit status, or 128 + signal */
	char output[16384]; /* stdout and stderr, truncated */
	uint64_t wall_ns;
	uint64_t cpu_ns; /* user + system of the child */
};

/*
 * Runs @p argv with the current environment plus @p env ("NAME=value" entries,
 * NULL-terminated; an entry replaces a variable of the same name). Returns 0 or
 * a negative errno.
 */
int wl_spawn(const char *const *argv, const char *const *env, struct wl_run *run);

#endif /* WL_SPAWN_H */
