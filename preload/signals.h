/* SPDX-License-Identifier: MIT */
/*
 * The signals the library handles (lifecycle.c decides when): the snapshot signal,
 * SIGTERM/SIGINT (opt-in, and in continuous mode), the crash signals in continuous
 * mode, and the CPU sampler's real-time signal. Each only where the program left the
 * default disposition.
 */
#ifndef ISC_SIGNALS_H
#define ISC_SIGNALS_H

/* Once: the snapshot, terminate and crash handlers that the configuration asks for. */
void isc_signals_install(void);
/* The sampler's signal: the first real-time signal the program leaves at the default. */
void isc_signals_install_sampler(void);

#endif /* ISC_SIGNALS_H */
