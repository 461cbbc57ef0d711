/* SPDX-License-Identifier: MIT */
/* The library's signal handlers (signals.h). */
#include "preload/signals.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "preload/core/collector.h"
#include "preload/core/guard.h"
#include "preload/lifecycle.h"
#include "preload/samplers/cpu-sampler.h"

static void on_snapshot_signal(int sig)
{
	(void)sig;
	isc_collector_request_snapshot(); /* an atomic store and a futex wake */
}

static void on_terminate(int sig)
{
	int saved = errno;
	struct sigaction dfl;

	isc_lifecycle_flush("signal");
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	/* Delivered when this handler returns: the process dies of the same signal. */
	raise(sig);
	errno = saved;
}

/*
 * A crash in continuous mode (SIGSEGV, SIGBUS, SIGFPE, SIGILL, abort's SIGABRT): the
 * flight recorder freezes its segments as a trace, then the process dies of the same
 * signal (the handler resets the default and the signal is raised again: a fault
 * re-executes and faults, abort raises again). A crash inside the library itself
 * (its guard raised) only closes nothing: the segments on disk are what is left.
 */
static void on_crash(int sig)
{
	int saved = errno;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	if (isc_tls_guard == 0) {
		isc_lifecycle_flush("crash");
	}
	raise(sig);
	errno = saved;
}

/* Installs handler for sig only where the program left the default disposition. */
static bool install_over_default(int sig, void (*handler)(int))
{
	struct sigaction old, sa;
	if (sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != SIG_DFL) {
		return false;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	return sigaction(sig, &sa, NULL) == 0;
}

void isc_signals_install(void)
{
	static _Atomic bool done;
	if (atomic_exchange(&done, true)) {
		return;
	}
	int snap = isc_config.snapshot_signal;
	if (snap && !install_over_default(snap, on_snapshot_signal)) {
		isc_error("INFERSCOPE_SNAPSHOT_SIGNAL: signal %d is already used by the program; "
			  "snapshots are off",
			  snap);
	}
	if (isc_config.continuous) {
		/* what an OOM killer's sequence, systemd or Kubernetes send before SIGKILL */
		static const int crash[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
		for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++) {
			install_over_default(crash[i], on_crash);
		}
		if (!isc_config.handle_signals && !install_over_default(SIGTERM, on_terminate)) {
			isc_info("SIGTERM has a handler of the program's: left alone");
		}
	}
	if (isc_config.handle_signals) {
		if (!install_over_default(SIGTERM, on_terminate)) {
			isc_info("SIGTERM has a handler of the program's: left alone");
		}
		if (!install_over_default(SIGINT, on_terminate)) {
			isc_info("SIGINT has a handler of the program's: left alone");
		}
	}
}

/*
 * The CPU sampler's signal: the first real-time signal from SIGRTMIN+4 that the program
 * leaves at the default (glibc keeps SIGRTMIN..+2, programs that use real-time signals
 * take them from the bottom), never the snapshot signal. SA_RESTART: a system call the
 * signal interrupts is restarted, never failed with EINTR.
 */
void isc_signals_install_sampler(void)
{
	if (!isc_samplers_wanted()) {
		return;
	}
	for (int s = SIGRTMIN + 4; s <= SIGRTMAX; s++) {
		struct sigaction old, sa;
		if (s == isc_config.snapshot_signal || sigaction(s, NULL, &old) != 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
			continue;
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = isc_samplers_on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		if (sigaction(s, &sa, NULL) == 0) {
			isc_samplers_start(s);
			return;
		}
	}
	isc_error("CPU samples: no free real-time signal; sampling is off");
}
