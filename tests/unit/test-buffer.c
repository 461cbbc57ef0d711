/* SPDX-License-Identifier: MIT */
/* The recording core in-process: concurrent appends lose and tear nothing; at the
 * memory cap every event is either recorded or counted as dropped, exactly. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "preload/core/buffer.h"

#define THREADS 8

struct job {
	unsigned events;
	unsigned width; /* records per event (head + continuations) */
	uint64_t recorded;
	uint64_t dropped;
};

/* Each event: a head carrying (tid, seq) and width-1 continuations carrying the same
 * pattern, so a torn or interleaved write shows up as a mismatch. */
static void *writer(void *arg)
{
	struct job *j = arg;
	struct isc_thread *t = isc_thread_self();
	for (unsigned i = 0; i < j->events; i++) {
		struct isc_event *e = isc_event_reserve(ISC_EV_COUNTER, j->width);
		if (e == NULL) {
			continue;
		}
		for (unsigned k = 0; k < j->width; k++) {
			memset(&e[k], 0, sizeof(e[k]));
			e[k].tid = t->tid;
			e[k].kind = k == 0 ? ISC_EV_COUNTER : ISC_EV_EXT;
			e[k].ts = i;
			e[k].aux = j->width;
			e[k].u.raw[0] = ((uint64_t)t->tid << 32) | i;
			e[k].u.raw[3] = ~e[k].u.raw[0];
		}
		isc_event_commit(j->width);
	}
	j->recorded = t->recorded;
	j->dropped = t->dropped[ISC_EV_COUNTER];
	return NULL;
}

static void run_writers(struct job *jobs, unsigned n)
{
	pthread_t th[THREADS];
	for (unsigned i = 0; i < n; i++) {
		pthread_create(&th[i], NULL, writer, &jobs[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
	}
}

/* Checks the events of one chunk (order, content, whole events); returns how many. */
static uint64_t check_chunk(const struct isc_chunk *c, uint64_t *last_seq)
{
	uint32_t head = atomic_load(&c->head);
	uint64_t events = 0;
	for (uint32_t r = 0; r < head;) {
		const struct isc_event *e = &c->rec[r];
		unsigned width = e->aux;
		cr_assert(width >= 1 && r + width <= head, "a chunk holds whole events only");
		cr_assert_eq(e->kind, ISC_EV_COUNTER);
		cr_assert_eq(e->tid, c->tid, "records carry their writer's tid");
		for (unsigned k = 0; k < width; k++) {
			cr_assert_eq(e[k].u.raw[0], ((uint64_t)c->tid << 32) | e->ts,
				     "torn record");
			cr_assert_eq(e[k].u.raw[3], ~e[k].u.raw[0], "torn record");
		}
		cr_assert(e->ts > *last_seq || *last_seq == UINT64_MAX, "per-thread order kept");
		*last_seq = e->ts;
		events++;
		r += width;
	}
	return events;
}

Test(buffer, concurrent_appends_lose_and_tear_nothing)
{
	cr_assert_eq(isc_buffer_init(256u << 20), 0);
	struct job jobs[THREADS];
	for (unsigned i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ .events = 50000, .width = 1 + i % 3 };
	}
	run_writers(jobs, THREADS);
	uint64_t total = 0;
	for (unsigned i = 0; i < THREADS; i++) {
		cr_assert_eq(jobs[i].dropped, 0);
		cr_assert_eq(jobs[i].recorded, 50000);
	}
	/* full chunks come newest first; reverse them to check order per thread */
	struct isc_chunk *list[8192];
	size_t n = 0;
	for (struct isc_chunk *c = isc_full_take(); c; c = c->next_full) {
		list[n++] = c;
	}
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		uint64_t last = UINT64_MAX, found = 0;
		for (size_t i = n; i-- > 0;) {
			if (list[i]->tid == t->tid) {
				found += check_chunk(list[i], &last);
			}
		}
		struct isc_chunk *cur = atomic_load(&t->chunk);
		if (cur) {
			found += check_chunk(cur, &last);
		}
		if (t->recorded) {
			cr_assert_eq(found, t->recorded, "thread %u: every event is in a chunk",
				     t->tid);
		}
		total += found;
	}
	cr_assert_eq(total, THREADS * 50000ull);
}

Test(buffer, drop_counter_is_exact_at_the_memory_cap)
{
	/* 1 MiB = 16 chunks of 1023 records: far less than 8 x 20000 events */
	cr_assert_eq(isc_buffer_init(1u << 20), 0);
	struct job jobs[THREADS];
	for (unsigned i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ .events = 20000, .width = 1 + i % 2 };
	}
	run_writers(jobs, THREADS);
	uint64_t recorded = 0, dropped = 0;
	for (unsigned i = 0; i < THREADS; i++) {
		cr_assert_eq(jobs[i].recorded + jobs[i].dropped, 20000,
			     "thread %u: recorded %lu + dropped %lu", i,
			     (unsigned long)jobs[i].recorded, (unsigned long)jobs[i].dropped);
		recorded += jobs[i].recorded;
		dropped += jobs[i].dropped;
	}
	cr_assert_gt(dropped, 0);
	/* what was recorded fits in the cap, and nearly fills it */
	cr_assert_leq(recorded, 16ull * ISC_CHUNK_RECORDS);
	cr_assert_geq(recorded, 16ull * ISC_CHUNK_RECORDS / 2 - THREADS);
	cr_assert_eq(isc_buffer_chunks_in_use(), 16);
}

Test(buffer, released_chunks_are_reused)
{
	cr_assert_eq(isc_buffer_init(1u << 20), 0);
	struct job j = { .events = 3 * ISC_CHUNK_RECORDS, .width = 1 };
	writer(&j);
	cr_assert_eq(j.dropped, 0);
	uint32_t before = isc_buffer_chunks_in_use();
	for (struct isc_chunk *c = isc_full_take(); c;) {
		struct isc_chunk *next = c->next_full;
		isc_chunk_release(c);
		c = next;
	}
	cr_assert_eq(isc_buffer_chunks_in_use(), 1, "only the current chunk stays");
	cr_assert_eq(before, 3, "the third chunk is full but still current");
	struct job more = { .events = 14 * ISC_CHUNK_RECORDS, .width = 1 };
	writer(&more);
	cr_assert_eq(more.dropped, 0, "released chunks serve new events");
}
