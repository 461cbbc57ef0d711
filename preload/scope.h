/* SPDX-License-Identifier: MIT */
/* Scopes (api.c): the one place a scope frame becomes a cpu_call record. */
#ifndef ISC_SCOPE_H
#define ISC_SCOPE_H

#include <stdint.h>

#include "format/record.h"
#include "preload/core/thread.h"

/* Fills e with the scope open at depth d of thread t, ending at end (a pop, or the
 * flush for a scope still open: then flags has ISC_EVF_UNTERMINATED). */
void isc_scope_record(struct isc_event *e, const struct isc_thread *t, uint32_t d, uint64_t end,
		      uint16_t flags);

#endif /* ISC_SCOPE_H */
