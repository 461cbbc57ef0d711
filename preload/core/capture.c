/* SPDX-License-Identifier: MIT */
#include "preload/core/capture.h"

#include <pthread.h>

#include "common/clock.h"

struct isc_capture_state isc_capture = { 0, 0, UINT64_MAX };

_Atomic int isc_capture_idle_pending;
static bool (*idle_fn)(void);

static _Atomic bool ready;
static _Atomic bool live;	   /* initialised and not flushed (lifecycle.c) */
static _Atomic bool api_on = true; /* not paused by the API */

#define MAX_WINDOWS 256
static uint64_t api_windows[MAX_WINDOWS][2]; /* resume .. pause (UINT64_MAX: open) */
static unsigned n_api_windows;
static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;

static void update_on(void)
{
	bool on = atomic_load(&live) && atomic_load(&api_on);
	atomic_store_explicit(&isc_capture.on, on, memory_order_relaxed);
}

void isc_core_set_ready(void)
{
	atomic_store_explicit(&ready, true, memory_order_release);
}

bool isc_core_ready(void)
{
	return atomic_load_explicit(&ready, memory_order_acquire);
}

void isc_capture_init(uint64_t start, uint64_t delay_ns, uint64_t duration_ns, bool paused)
{
	isc_capture.from_ns = start + delay_ns;
	isc_capture.until_ns = duration_ns ? isc_capture.from_ns + duration_ns : UINT64_MAX;
	atomic_store(&api_on, !paused);
	n_api_windows = 0;
	if (!paused) {
		api_windows[0][0] = start;
		api_windows[0][1] = UINT64_MAX;
		n_api_windows = 1;
	}
}

bool isc_capture_live(void)
{
	return atomic_load_explicit(&live, memory_order_relaxed);
}

void isc_capture_set_live(bool on)
{
	atomic_store(&live, on);
	/* armed while live (init, a fork child), never after the final flush */
	atomic_store(&isc_capture_idle_pending, on && idle_fn != NULL);
	update_on();
}

void isc_capture_set_idle(bool (*fn)(void))
{
	idle_fn = fn;
}

void isc_capture_idle(void)
{
	if (atomic_exchange(&isc_capture_idle_pending, 0) && idle_fn && isc_core_ready() &&
	    !idle_fn()) {
		atomic_store(&isc_capture_idle_pending, 1);
	}
}

void isc_capture_resume(void)
{
	pthread_mutex_lock(&window_lock);
	if (!atomic_exchange(&api_on, true) && n_api_windows < MAX_WINDOWS) {
		api_windows[n_api_windows][0] = isc_now();
		api_windows[n_api_windows][1] = UINT64_MAX;
		n_api_windows++;
	}
	pthread_mutex_unlock(&window_lock);
	update_on();
}

void isc_capture_pause(void)
{
	pthread_mutex_lock(&window_lock);
	if (atomic_exchange(&api_on, false) && n_api_windows > 0) {
		api_windows[n_api_windows - 1][1] = isc_now();
	}
	pthread_mutex_unlock(&window_lock);
	update_on();
}

size_t isc_capture_windows(uint64_t (*w)[2], size_t max, uint64_t end_ns)
{
	size_t n = 0;
	for (unsigned i = 0; i < n_api_windows && n < max; i++) {
		uint64_t a = api_windows[i][0], b = api_windows[i][1];
		a = a > isc_capture.from_ns ? a : isc_capture.from_ns;
		b = b < isc_capture.until_ns ? b : isc_capture.until_ns;
		b = b < end_ns ? b : end_ns;
		if (a < b) {
			w[n][0] = a;
			w[n][1] = b;
			n++;
		}
	}
	return n;
}
