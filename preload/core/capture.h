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

static inline bool isc_capturing(uint64_t now)
{
	return atomic_load_explicit(&isc_capture.on, memory_order_relaxed) &&
	       now >= isc_capture.from_ns && now < isc_capture.until_ns;
}

/* API control (lifecycle.c): pause and resume, recorded as capture windows. */
void isc_capture_resume(void);
void isc_capture_pause(void);

/* The intervals during which events were recorded, up to end_ns: the delay/duration
 * window intersected with the API's resume/pause intervals. Returns how many. */
size_t isc_capture_windows(uint64_t (*w)[2], size_t max, uint64_t end_ns);

#endif /* ISC_CAPTURE_H */
