/* SPDX-License-Identifier: MIT */
/*
 * Thread-local state of the preload: one pointer and one guard, nothing else.
 *
 * Both use the initial-exec TLS model: the variables live in the static TLS block,
 * so reading them is one %fs-relative load and never calls __tls_get_addr, which
 * may call malloc the first time a thread touches a dynamic TLS block - fatal inside
 * a malloc hook. A preloaded library may use initial-exec TLS because it is loaded
 * at startup, when static TLS space is still reserved for it.
 *
 * The guard is a nesting counter: while it is non-zero on a thread, hooks forward to
 * the real function without recording. It is raised around everything the library
 * does on its own behalf (dlsym, writing the trace, the collector thread), so that
 * our own allocations and writes never show up as the application's.
 */
#ifndef ISC_GUARD_H
#define ISC_GUARD_H

#include <stdbool.h>

struct isc_thread;

#define ISC_TLS __attribute__((tls_model("initial-exec")))

/* Both in one block: a hook finds the two with one load of the block's offset from the
 * GOT (initial-exec in a shared library), not two. */
struct isc_tls {
	struct isc_thread *self;
	unsigned guard;
};

extern __thread struct isc_tls isc_tls ISC_TLS;

#define isc_tls_self (isc_tls.self)
#define isc_tls_guard (isc_tls.guard)

/* Returns true when the caller may record (the guard was 0); the guard is raised. */
static inline bool isc_guard_enter(void)
{
	return isc_tls_guard++ == 0;
}

static inline void isc_guard_leave(void)
{
	isc_tls_guard--;
}

static inline bool isc_guarded(void)
{
	return isc_tls_guard != 0;
}

#endif /* ISC_GUARD_H */
