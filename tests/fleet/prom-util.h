/* SPDX-License-Identifier: MIT */
/*
 * A real Prometheus server for the fleet tests: started on a free loopback port with a
 * scrape configuration of its own, and queried through its HTTP API.
 */
#ifndef ISC_PROM_UTIL_H
#define ISC_PROM_UTIL_H

#include <sys/types.h>

/* Starts `prometheus` (path) scraping target (host:port) every second, with its
 * configuration, data and log under dir; *addr (host:port, at least 64 bytes) is where
 * its API listens. Returns its pid. */
pid_t prom_start(const char *prometheus, const char *dir, const char *target, char *addr);
/* The instant query's single value at Unix time at (0: now), or NAN while Prometheus
 * has none (or more than one series answers). *eval_time (may be NULL) gets the
 * evaluation time Prometheus answered for. */
double prom_query(const char *prom, const char *promql, double at, double *eval_time);
/* Polls the query until it has a value (bounded: timeout_s); fails the test otherwise. */
double prom_wait(const char *prom, const char *promql, double timeout_s);

#endif /* ISC_PROM_UTIL_H */
