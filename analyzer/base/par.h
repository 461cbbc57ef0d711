/* SPDX-License-Identifier: MIT */
/*
 * Independent jobs on the analyzer's threads: the passes after the parse that read the
 * model and write results of their own (the analysis's stages, the verdict's what-ifs).
 * Each job writes only its own slot, so results are collected in job order and the
 * output is that of one thread.
 */
#ifndef ISC_PAR_H
#define ISC_PAR_H

#include <stddef.h>

/* Threads the passes may take: 0 (the default) one per online CPU, 1 none but the
 * caller's (--threads). */
void isc_par_set_threads(unsigned n);
/* That count, at least 1. */
unsigned isc_par_threads(void);
/*
 * Runs job(arg, i, worker) for every i in [0, n), on up to `workers` threads (capped by
 * isc_par_threads()), the caller's being worker 0; a job is taken by the first worker
 * that is free, so each worker's state (a buffer of its own) is indexed by `worker`.
 * Where no thread can start, the caller runs them all. Returns the workers used.
 */
unsigned isc_par_run(size_t n, unsigned workers, void (*job)(void *arg, size_t i, unsigned worker),
		     void *arg);

#endif /* ISC_PAR_H */
