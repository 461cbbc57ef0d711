/* SPDX-License-Identifier: MIT */
/*
 * When is data written? This file's counterpart (lifecycle.c) is the one answer:
 *
 *   - normal exit: the ELF destructor of libinferscope.so, which runs after the
 *     program's atexit handlers and the destructors of libraries loaded after it;
 *   - _exit/_Exit (multiprocessing children leave with os._exit): their hooks;
 *   - exec*: before the image is replaced, when the new program can really be
 *     executed and this process recorded something;
 *   - fork: the child starts over with its own files; a vfork child never writes;
 *   - SIGTERM/SIGINT: only with INFERSCOPE_HANDLE_SIGNALS=1 and a default
 *     disposition; the signal is re-raised so the exit status stays the same;
 *   - a snapshot (INFERSCOPE_SNAPSHOT_SIGNAL, inferscope_flush()) writes a trace of
 *     what is recorded so far and lets the process go on;
 *   - SIGKILL, a crash: the spill file stays; inferscope-analyze reads it;
 *   - continuous mode (recorder.h): segments are closed as the run goes; exit, _exit,
 *     exec, SIGTERM and a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, where left
 *     at their default) freeze the retained segments as the trace; SIGKILL leaves them;
 *   - a capture window (window.h) is written by the collector when it closes.
 */
#ifndef ISC_LIFECYCLE_H
#define ISC_LIFECYCLE_H

#include <stdbool.h>

/* The constructor's work. Idempotent. */
void isc_lifecycle_init(void);

/* The final flush. Returns true when a trace file was written. */
bool isc_lifecycle_flush(const char *reason);

/* A snapshot from an application thread (inferscope_flush()). 0 or -errno. */
int isc_lifecycle_snapshot(const char *reason);

#endif /* ISC_LIFECYCLE_H */
