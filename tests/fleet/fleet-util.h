/* SPDX-License-Identifier: MIT */
/*
 * What the fleet tests share: spawning a server with its output in a file, waiting for a
 * line in it, a one-shot HTTP GET on loopback, copying a (possibly gzip'd) trace into a
 * watched directory under a segment's name.
 */
#ifndef ISC_FLEET_UTIL_H
#define ISC_FLEET_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Starts argv with stdout and stderr appended to log; returns the pid. */
pid_t fleet_spawn(const char *const argv[], const char *log);
/* SIGTERM, then SIGKILL after 10 s; returns the wait status. */
int fleet_stop(pid_t pid);
/* Waits up to timeout_s for needle in the file; returns a malloc'd copy of the rest of
 * its line, or NULL. */
char *fleet_wait_line(const char *path, const char *needle, double timeout_s);
/* GET (or HEAD) http://addr/target with an Accept header (NULL: none). Returns the
 * status (-1 when the connection failed); *body (malloc'd) and *ctype (malloc'd) may be
 * NULL. */
int fleet_http(const char *addr, const char *method, const char *target, const char *accept,
	       char **body, size_t *len, char **ctype);
/* A free loopback TCP port (bound and released: good enough on a test machine). */
int fleet_free_port(void);
/* Copies src (gunzipping when it is gzip'd) to dst through dst.part and a rename, as the
 * recorder closes a segment. */
void fleet_put_segment(const char *src, const char *dst);
bool fleet_exists(const char *path);
/* A scratch directory per test (/tmp/isc-fleet-XXXXXX), made and removed as a suite's
 * .init and .fini. */
extern char fleet_dir[];
void fleet_dir_setup(void);
void fleet_dir_teardown(void);
void fleet_sleep_ms(int ms);

#endif /* ISC_FLEET_UTIL_H */
