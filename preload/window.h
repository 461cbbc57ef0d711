/* SPDX-License-Identifier: MIT */
/*
 * Capture windows on demand (`inferscope capture`, docs/fleet-capture in man
 * inferscope(1)): one window at a time, opened by the control socket (remote.c) and
 * written by the collector thread.
 *
 * A window by steps starts at the next step boundary and covers exactly N steps. A
 * step is an outermost scope (an annotation scope of the API or the Python helper, an
 * NVTX push/pop range): the one named by the request (a name, or a prefix ending in
 * '*', e.g. 'ProfilerStep*'), else the first outermost scope that opens after the
 * request; the steps are that scope's occurrences on the same thread. The window runs
 * from the first one's start to the N-th one's end. A window by duration starts at
 * once. Its trace holds the records that start inside the window and the GPU work
 * of the calls made inside it (the converter's window, format/convert.h). A process
 * that was paused (INFERSCOPE_START_PAUSED, inferscope_capture_stop()) records for
 * the window and is paused again after it.
 */
#ifndef ISC_WINDOW_H
#define ISC_WINDOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum isc_window_state {
	ISC_WIN_IDLE = 0,
	ISC_WIN_ARMED, /* waiting for the first step */
	ISC_WIN_STARTING,
	ISC_WIN_RUNNING, /* inside the window */
	ISC_WIN_CLOSED,	 /* ended: the collector writes its trace */
	ISC_WIN_WRITTEN,
	ISC_WIN_FAILED,
};

/* Non-zero while a step window waits for or counts steps: the scope hooks' one load. */
extern _Atomic int isc_window_armed;

struct isc_window_req {
	unsigned steps;	      /* 0: by duration */
	uint64_t duration_ns; /* with steps 0 */
	char step[128];	      /* step scope name or prefix*, "" = the first outermost */
};

/* From the control socket: opens a window. 0, or -EBUSY when one is open. */
int isc_window_open(const struct isc_window_req *req);
/* The requester left: the window is abandoned (its trace is not written). */
void isc_window_cancel(void);
/* The state, and once written the trace path, steps and events. */
enum isc_window_state isc_window_poll(char *path, size_t cap, unsigned *steps,
				      unsigned long long *events);
/* After WRITTEN or FAILED has been reported: ready for the next request. */
void isc_window_reset(void);

/* The scope hooks (api.c), for outermost scopes only, when isc_window_armed. */
void isc_window_on_push(uint32_t tid, uint32_t name, uint64_t ts);
void isc_window_on_pop(uint32_t tid, uint32_t name, uint64_t end);

/* The collector's tick: closes a window by duration, writes a closed window's trace.
 * drain delivers the GPU records held by CUPTI first (may be NULL). */
void isc_window_tick(uint64_t now);
void isc_window_set_drain(void (*drain)(void));

#endif /* ISC_WINDOW_H */
