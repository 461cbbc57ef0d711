/* SPDX-License-Identifier: MIT */
#include "preload/window.h"

#include <errno.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "format/convert.h"
#include "preload/core/capture.h"
#include "preload/core/collector.h"
#include "preload/core/ids.h"
#include "preload/core/intern.h"
#include "preload/session.h"

_Atomic int isc_window_armed;

static struct {
	_Atomic int state; /* enum isc_window_state */
	struct isc_window_req req;
	bool paused_before; /* recording was paused: pause again after the window */
	uint32_t tid, name; /* the step scope, once the first step opened */
	unsigned done;	    /* steps ended inside the window */
	uint64_t t0, t1, c0, c1;
	unsigned seq;
	char path[4096];
	unsigned long long events;
	void (*drain)(void);
} win;

void isc_window_set_drain(void (*drain)(void))
{
	win.drain = drain;
}

static bool recording_paused(void)
{
	return !atomic_load(&isc_capture.on);
}

int isc_window_open(const struct isc_window_req *req)
{
	int idle = ISC_WIN_IDLE;
	if (!atomic_compare_exchange_strong(&win.state, &idle, ISC_WIN_STARTING)) {
		return -EBUSY;
	}
	win.req = *req;
	win.done = 0;
	win.tid = 0;
	win.name = 0;
	win.events = 0;
	win.path[0] = '\0';
	win.paused_before = recording_paused();
	if (win.paused_before) {
		isc_capture_resume();
	}
	if (req->steps == 0) {
		win.t0 = isc_now();
		win.c0 = atomic_load(&isc_id_counter) + 1;
		win.t1 = win.t0 + req->duration_ns;
		atomic_store(&win.state, ISC_WIN_RUNNING);
	} else {
		atomic_store(&win.state, ISC_WIN_ARMED);
		atomic_store(&isc_window_armed, 1);
	}
	isc_collector_wake();
	return 0;
}

static void end_recording(void)
{
	atomic_store(&isc_window_armed, 0);
	if (win.paused_before) {
		isc_capture_pause();
	}
}

void isc_window_cancel(void)
{
	int s = atomic_load(&win.state);
	if (s == ISC_WIN_ARMED || s == ISC_WIN_RUNNING) {
		if (atomic_compare_exchange_strong(&win.state, &s, ISC_WIN_FAILED)) {
			end_recording();
		}
	}
	/* a window being written is finished by the collector; the next poll resets */
}

enum isc_window_state isc_window_poll(char *path, size_t cap, unsigned *steps,
				      unsigned long long *events)
{
	int s = atomic_load_explicit(&win.state, memory_order_acquire);
	if (s == ISC_WIN_WRITTEN) {
		isc_fmt(path, cap, "%s", win.path);
		*steps = win.done;
		*events = win.events;
	}
	return (enum isc_window_state)s;
}

void isc_window_reset(void)
{
	int s = atomic_load(&win.state);
	if (s == ISC_WIN_WRITTEN || s == ISC_WIN_FAILED) {
		atomic_store(&win.state, ISC_WIN_IDLE);
	}
}

/* The requested step name: exact, or a prefix when it ends in '*'. */
static bool step_matches(uint32_t name)
{
	const char *want = win.req.step;
	if (want[0] == '\0') {
		return true;
	}
	uint32_t len = 0;
	const char *s = isc_intern_get(name, &len);
	size_t n = strlen(want);
	if (s == NULL) {
		return false;
	}
	if (want[n - 1] == '*') {
		return len >= n - 1 && memcmp(s, want, n - 1) == 0;
	}
	return len == n && memcmp(s, want, n) == 0;
}

void isc_window_on_push(uint32_t tid, uint32_t name, uint64_t ts)
{
	int armed = ISC_WIN_ARMED;
	if (atomic_load(&win.state) != ISC_WIN_ARMED || !step_matches(name) ||
	    !atomic_compare_exchange_strong(&win.state, &armed, ISC_WIN_STARTING)) {
		return;
	}
	win.tid = tid;
	win.name = name;
	win.t0 = ts;
	win.c0 = atomic_load(&isc_id_counter) + 1;
	atomic_store_explicit(&win.state, ISC_WIN_RUNNING, memory_order_release);
}

void isc_window_on_pop(uint32_t tid, uint32_t name, uint64_t end)
{
	if (atomic_load_explicit(&win.state, memory_order_acquire) != ISC_WIN_RUNNING ||
	    win.req.steps == 0 || tid != win.tid || name != win.name) {
		return;
	}
	if (++win.done < win.req.steps) {
		return;
	}
	win.t1 = end;
	win.c1 = atomic_load(&isc_id_counter) + 1;
	end_recording();
	atomic_store_explicit(&win.state, ISC_WIN_CLOSED, memory_order_release);
	isc_collector_wake();
}

static void write_window(void)
{
	struct isc_convert_opts o;
	struct isc_convert_result res;
	const char *out = isc_session.output;
	size_t n = strlen(out);
	if (n > 5 && strcmp(out + n - 5, ".json") == 0) {
		n -= 5;
	}
	char stem[sizeof(win.path)];
	memcpy(stem, out, n < sizeof(stem) ? n : sizeof(stem) - 1);
	stem[n < sizeof(stem) ? n : sizeof(stem) - 1] = '\0';
	isc_fmt(win.path, sizeof(win.path), "%s.%d.capture-%u.json", stem, isc_session.pid,
		++win.seq);
	if (win.drain) {
		win.drain(); /* the GPU records CUPTI still holds */
	}
	memset(&o, 0, sizeof(o));
	o.window_from_ns = win.t0;
	o.window_until_ns = win.t1;
	o.window_corr_from = win.c0;
	o.window_corr_until = win.c1;
	int r = isc_session_write_window(win.path, &o, &res);
	if (r < 0) {
		isc_error("capture: cannot write %s (%s)", win.path, strerror(-r));
		atomic_store_explicit(&win.state, ISC_WIN_FAILED, memory_order_release);
		return;
	}
	win.events = res.events;
	isc_info("capture: wrote %s (%llu events, %u steps)", win.path, win.events, win.done);
	atomic_store_explicit(&win.state, ISC_WIN_WRITTEN, memory_order_release);
}

void isc_window_tick(uint64_t now)
{
	int s = atomic_load_explicit(&win.state, memory_order_acquire);
	if (s == ISC_WIN_RUNNING && win.req.steps == 0 && now >= win.t1) {
		win.c1 = atomic_load(&isc_id_counter) + 1;
		end_recording();
		s = ISC_WIN_CLOSED;
		atomic_store(&win.state, s);
	}
	if (s == ISC_WIN_CLOSED) {
		write_window();
	}
}
