/* SPDX-License-Identifier: MIT */
/*
 * The collector: one background thread, started lazily on the first recorded
 * event (never in the constructor), that every tick
 *   - runs the registered samplers (per-thread CPU time, ...),
 *   - writes new strings, full chunks and the published part of every live chunk
 *     to the spill file, and returns spilled full chunks to the free list,
 *   - releases the chunk of a thread that has exited,
 *   - writes a snapshot when one was requested (signal or API),
 *   - ends the process as glibc would when the program's last thread has ended.
 * Its own activity is never recorded: it runs with the guard raised.
 *
 * All spilling goes through isc_collector_spill(), called by the collector thread or,
 * once that thread is stopped, by the flush: the spill file has one writer at a
 * time, and each chunk's `spilled` mark is only touched by that writer.
 */
#ifndef ISC_COLLECTOR_H
#define ISC_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

typedef void (*isc_tick_fn)(uint64_t now_ns);

/* Registers a function run on every tick on the collector thread (at most 8). */
void isc_collector_add_tick(isc_tick_fn fn);

/* The process the collector belongs to, and whether it starts at the first host event
 * (the process the user started) rather than at the first full chunk. A vfork child
 * shares our memory and must never start threads: only the owner's pid starts one. */
void isc_collector_set_owner(int pid, bool eager);
/* From the host hooks: starts the thread now when the owner asked for an eager start,
 * recording is on and this is the owner's process. */
void isc_collector_start_eager(void);

/* Starts the thread if it is not running (idempotent, cheap when running). */
void isc_collector_start(void);
/* Stops and joins it; false when it did not stop within the timeout. */
bool isc_collector_stop(void);
bool isc_collector_running(void);
uint32_t isc_collector_tid(void);
void isc_collector_wake(void);

/* How many times the collector thread woke up in this process: ticks, dozes (once
 * nothing is recorded it sleeps a second at a time: buffer.h, isc_collector_dozing) and
 * wakes. */
uint64_t isc_collector_wakeups(void);

/* Asks the collector to write a snapshot at its next tick (async-signal-safe). */
void isc_collector_request_snapshot(void);

/*
 * Spills everything published so far: strings, full chunks, partial chunks. With
 * `final`, also what only the flush may do (no chunk is released). 0 or -errno.
 */
int isc_collector_spill(bool final);
/* The last spill's error (0: it was written); records in memory not written yet. */
int isc_collector_spill_error(void);
uint64_t isc_collector_unspilled(void);

/* After fork() in the child: the thread does not exist there. */
void isc_collector_reset_after_fork(void);

/*
 * Paused around a fork (threads.h, "The quiet period after a fork"): the fork's prepare
 * handler stops the thread (isc_collector_pause); the restart comes from the parent's
 * next hooked system call or chunk taken once the quiet period is over
 * (isc_collector_resume_due).
 */
bool isc_collector_pause(void);
/* Set while paused (read on hot paths, relaxed). */
extern _Atomic bool isc_collector_paused;
/* Restarts the thread when paused and the quiet period is over (cheap otherwise). */
void isc_collector_resume_due(void);

/*
 * Called by the spiller on each range of records just before they are written, by
 * whichever thread spills (one at a time): the CPU sampler resolves the Python code
 * objects its samples point to there, while they are still alive. NULL = none.
 */
struct isc_event;
extern void (*isc_spill_prepare)(struct isc_event *recs, uint32_t n);

/*
 * Where the collector's output goes, given by the layer above (lifecycle.c registers
 * the session's functions at init), so the core never calls up: `spill` returns the
 * open spill file (opened with its metadata blocks on first use) or NULL when none can
 * be had; `snapshot` writes a snapshot trace. Both run on the spiller's thread.
 */
struct isc_spill;
struct isc_collector_sink {
	struct isc_spill *(*spill)(void);
	void (*snapshot)(const char *reason);
	/* Optional (continuous mode): `full` says whether `bytes` more would take the open
	 * segment past its bound (bytes 0: whether its time is up); `rotate` then closes
	 * it and returns the next one, or NULL. The collector writes what it queued for
	 * the old segment before it rotates, and the new segment's strings first. */
	bool (*full)(const struct isc_spill *s, uint64_t bytes);
	struct isc_spill *(*rotate)(void);
};
void isc_collector_set_sink(const struct isc_collector_sink *sink);

#endif /* ISC_COLLECTOR_H */
