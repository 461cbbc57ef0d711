/* SPDX-License-Identifier: MIT */
/*
 * The capture window: whether an event happening now is recorded.
 *
 * Recording is on when the library is initialised and not flushed, the time is
 * inside [start + INFERSCOPE_DELAY, + INFERSCOPE_DURATION), and the API (or
 * cudaProfilerStart/Stop) has not paused it. Hooks ask with the timestamp they
 * already took, so the check is two loads and two compares.
 */
#ifndef ISC_CAPTURE_H
#define ISC_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isc_capture_state {
	_Atomic int on;	   /* initialised, not flushed, not paused by the API */
	uint64_t from_ns;  /* window start */
	uint64_t until_ns; /* window end (UINT64_MAX when open-ended) */
};

extern struct isc_capture_state isc_capture;
/* Set while a paused process has not yet run its idle hook (isc_capture_set_idle). */
extern _Atomic int isc_capture_idle_pending;
void isc_capture_idle(void);

/* The check alone, for a signal handler (the CPU sampler): never runs the idle hook,
 * which may start a thread. */
static inline bool isc_capturing_signal_safe(uint64_t now)
{
	return atomic_load_explicit(&isc_capture.on, memory_order_relaxed) &&
	       now >= isc_capture.from_ns && now < isc_capture.until_ns;
}

static inline bool isc_capturing(uint64_t now)
{
	if (!atomic_load_explicit(&isc_capture.on, memory_order_relaxed)) {
		/* paused: what must answer while nothing is recorded starts once (cold) */
		if (__builtin_expect(
			    atomic_load_explicit(&isc_capture_idle_pending, memory_order_relaxed),
			    0)) {
			isc_capture_idle();
		}
		return false;
	}
	return now >= isc_capture.from_ns && now < isc_capture.until_ns;
}

/* Set once, by lifecycle.c, when the library has finished initialising; hooks that run
 * before (a library initialised before ours calls malloc or read) pass through. Never
 * set with INFERSCOPE_ENABLE=0. */
void isc_core_set_ready(void);
bool isc_core_ready(void);

/* The window set at start: [start + delay, + duration) (duration 0: open-ended), and
 * whether recording starts paused (INFERSCOPE_START_PAUSED). */
void isc_capture_init(uint64_t start, uint64_t delay_ns, uint64_t duration_ns, bool paused);
/* The lifecycle's part: on once initialised, off once flushed (and on again in a fork
 * child). */
void isc_capture_set_live(bool on);
/* Initialised and not flushed, whatever the window and the API say: definitions that
 * later events need (a CUDA graph node, replayed in the window) are recorded then. */
bool isc_capture_live(void);

/* What runs once, from the first hook that finds recording paused (the control socket
 * of a paused process, which must answer before anything is recorded). fn checks it
 * runs in the right process and returns false to be asked again. */
void isc_capture_set_idle(bool (*fn)(void));

/* API control: pause and resume, recorded as capture windows. */
void isc_capture_resume(void);
void isc_capture_pause(void);

/* The intervals during which events were recorded, up to end_ns: the delay/duration
 * window intersected with the API's resume/pause intervals. Returns how many. */
size_t isc_capture_windows(uint64_t (*w)[2], size_t max, uint64_t end_ns);

#endif /* ISC_CAPTURE_H */
