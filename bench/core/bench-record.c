/* SPDX-License-Identifier: MIT */
/*
 * Cost of recording: the reserve/fill/commit path in-process (ns per event), with
 * the collector's work not included (it runs on another thread in real use).
 * Usage: bench-record [EVENTS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/core/buffer.h"
#include "common/clock.h"

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	isc_buffer_init(64ull << 20);
	/* recycle chunks ourselves so the cap never drops events */
	uint64_t t0 = isc_now();
	for (uint64_t i = 0; i < n; i++) {
		struct isc_event *e = isc_event_reserve(ISC_EV_COUNTER, 1);
		if (e) {
			e->ts = i;
			e->dur = 0;
			e->kind = ISC_EV_COUNTER;
			e->tid = 1;
			e->u.counter.value.i = (int64_t)i;
			isc_event_commit(1);
		}
		if ((i & 0xffff) == 0) {
			for (struct isc_chunk *c = isc_full_take(); c;) {
				struct isc_chunk *next = c->next_full;
				isc_chunk_release(c);
				c = next;
			}
		}
	}
	uint64_t t1 = isc_now();
	struct isc_thread *t = isc_thread_self();
	printf("record events=%llu dropped=%llu ns_per_event=%.2f\n",
	       (unsigned long long)t->recorded, (unsigned long long)t->dropped[ISC_EV_COUNTER],
	       (double)(t1 - t0) / (double)n);
	return 0;
}
