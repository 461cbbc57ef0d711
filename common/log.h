/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics that are safe anywhere: inside a hook, in a signal handler, in a
 * vfork child, at exit.
 *
 * A message is formatted into a stack buffer by a tiny formatter (no printf: it may
 * allocate and is not async-signal-safe) and written with one write(2) to stderr;
 * errno is saved and restored. Errors are always shown (a user must learn that a
 * variable was ignored or a trace could not be written); info and debug lines only
 * with INFERSCOPE_DEBUG. At most ISC_LOG_BURST lines per second, then a count of
 * what was suppressed.
 *
 * Supported conversions: %s %d %i %u %x %c %p %% with the l, ll and z modifiers.
 */
#ifndef ISC_LOG_H
#define ISC_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum isc_log_level {
	ISC_LOG_ERROR = 0,
	ISC_LOG_INFO = 1,
	ISC_LOG_DEBUG = 2,
};

#define ISC_LOG_BURST 20

/* 0: errors only (default), 1: info, 2: debug. Set from INFERSCOPE_DEBUG. */
void isc_log_set_level(int level);
int isc_log_level(void);

void isc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The formatter, exposed for tests and for building paths without snprintf. */
size_t isc_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
size_t isc_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The calling thread has unshared its descriptor table and emptied it: its messages go
 * to the program's stderr, copied from the program's table for each line. */
void isc_log_private_table(void);

#define isc_error(...) isc_log(ISC_LOG_ERROR, __VA_ARGS__)
#define isc_info(...) isc_log(ISC_LOG_INFO, __VA_ARGS__)
#define isc_debug(...) isc_log(ISC_LOG_DEBUG, __VA_ARGS__)

#endif /* ISC_LOG_H */
