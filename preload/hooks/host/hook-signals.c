/* SPDX-License-Identifier: MIT */
/*
 * Signal masks: sigprocmask and pthread_sigmask.
 *
 * The CPU sampler's timer signal must never be pending on a thread that blocks it:
 * there it is the program's to read (signalfd, sigwaitinfo, sigpending), a signal it
 * never asked for. A thread that blocks it loses its timer before the mask changes,
 * and gets it back as soon as it unblocks it (samplers/cpu-sampler.c); the collector
 * catches what a raw system call did at its next scan.
 */
#include <pthread.h>
#include <signal.h>

#include "preload/core/export.h"
#include "preload/hooks/host/host.h"
#include "preload/samplers/cpu-sampler.h"

static struct {
	__typeof(sigprocmask) *sigprocmask;
	__typeof(pthread_sigmask) *pthread_sigmask;
} real;

ISC_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (real.sigprocmask == NULL) {
		real.sigprocmask = isc_host_next("sigprocmask");
	}
	bool around = isc_sampler_mask_begin(how, set);
	int r = real.sigprocmask(how, set, old);
	if (around) {
		isc_sampler_mask_end();
	}
	return r;
}

ISC_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (real.pthread_sigmask == NULL) {
		real.pthread_sigmask = isc_host_next("pthread_sigmask");
	}
	bool around = isc_sampler_mask_begin(how, set);
	int r = real.pthread_sigmask(how, set, old);
	if (around) {
		isc_sampler_mask_end();
	}
	return r;
}
