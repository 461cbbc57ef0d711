/* SPDX-License-Identifier: MIT */
/*
 * Samplers on the collector thread (every INFERSCOPE_TICK, ~10 ms):
 *
 *   cpu_time   per thread, cumulative on-CPU time (µs), from the thread's CPU-time
 *              clock: one clock_gettime per thread, no file descriptor;
 *   wait_time  per thread, cumulative time runnable but waiting for a CPU (µs),
 *              from /proc/self/task/<tid>/schedstat, every 10th tick (it costs an
 *              open/read/close);
 *   live_heap  process-wide bytes allocated and not freed (sum of the threads'
 *              exact counters), thread_id 0.
 *
 * With these the analyzer can tell a thread that computes from one that waits,
 * even inside calls no hook sees. A sample is written only when the value changed
 * since the thread's last one: an idle thread costs nothing, and the value between
 * two samples is the earlier one. The threads sampled are the registered ones -
 * every thread that recorded or allocated anything. The final flush asks the
 * collector for one last sample, so that a run shorter than a tick still has one.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload/core/collector.h"
#include "common/config.h"
#include "preload/hooks/host/host.h"
#include "preload/core/procfs.h"
#include "preload/core/intern.h"
#include "common/log.h"

#define WAIT_EVERY 10
#define CACHE 4096 /* last values, direct-mapped by thread struct */

struct last {
	const struct isc_thread *t;
	uint64_t run_ns;
	uint64_t wait_ns;
};

static struct last cache[CACHE];
static uint32_t id_cpu, id_wait, id_heap;
static uint64_t ticks;
static int64_t last_heap = INT64_MIN, peak_heap;
static _Atomic int last_sample; /* 0, 1: asked by the flush, 2: taken */

/* A counter record in the collector's own chunk, on behalf of thread tid (0: the
 * process). Values in µs keep nanosecond resolution as doubles; bytes are integers. */
static void emit(uint32_t tid, uint32_t name, uint64_t now, double value, unsigned unit)
{
	struct isc_event *e = isc_event_reserve(ISC_EV_COUNTER, 1);
	if (e == NULL) {
		return;
	}
	memset(e, 0, sizeof(*e));
	e->ts = now;
	e->tid = tid;
	e->kind = ISC_EV_COUNTER;
	e->name = name;
	e->u.counter.unit = unit;
	if (unit == ISC_UNIT_BYTES) {
		e->u.counter.value.i = (int64_t)value;
	} else {
		e->u.counter.value.d = value;
		e->u.counter.is_double = 1;
	}
	isc_event_commit(1);
}

/* CLOCK_THREAD_CPUTIME_ID of another thread of this process: the kernel's encoding
 * of (tid, CPUCLOCK_SCHED), as pthread_getcpuclockid builds it. */
static bool thread_cpu_ns(uint32_t tid, uint64_t *ns)
{
	clockid_t id = (clockid_t)((~(unsigned)tid) << 3) | 6;
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0) {
		return false;
	}
	*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return true;
}

static bool thread_wait_ns(uint32_t tid, uint64_t *ns)
{
	char path[64], buf[128];
	isc_fmt(path, sizeof(path), "/proc/self/task/%u/schedstat", tid);
	if (isc_slurp(path, buf, sizeof(buf)) == 0) {
		return false;
	}
	char *end;
	strtoull(buf, &end, 10); /* run time, taken from the clock instead */
	if (end == buf) {
		return false;
	}
	*ns = strtoull(end, NULL, 10);
	return true;
}

static void sample_thread(const struct isc_thread *t, uint64_t now, bool waits)
{
	struct last *l = &cache[((uintptr_t)t / 64) % CACHE];
	if (l->t != t) {
		l->t = t;
		l->run_ns = UINT64_MAX;
		l->wait_ns = UINT64_MAX;
	}
	uint64_t v;
	if (thread_cpu_ns(t->tid, &v) && v != l->run_ns) {
		emit(t->tid, id_cpu, now, (double)v / 1000.0, ISC_UNIT_US);
		l->run_ns = v;
	}
	if (waits && thread_wait_ns(t->tid, &v) && v != l->wait_ns) {
		emit(t->tid, id_wait, now, (double)v / 1000.0, ISC_UNIT_US);
		l->wait_ns = v;
	}
}

static int64_t live_heap(void)
{
	int64_t sum = 0;
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		sum += __atomic_load_n(&t->malloc.live, __ATOMIC_RELAXED);
	}
	return sum;
}

static void tick(uint64_t now)
{
	bool last = atomic_load(&last_sample) == 1;
	if (!last && !isc_capturing(now)) {
		return;
	}
	uint32_t self = isc_collector_tid();
	bool waits = ++ticks % WAIT_EVERY == 1;
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		if (t->tid != self &&
		    atomic_load_explicit(&t->state, memory_order_relaxed) != ISC_THREAD_GONE) {
			sample_thread(t, now, waits);
		}
	}
	int64_t heap = isc_host_malloc_on ? live_heap() : last_heap;
	if (heap != last_heap) {
		emit(0, id_heap, now, (double)heap, ISC_UNIT_BYTES);
		last_heap = heap;
		peak_heap = heap > peak_heap ? heap : peak_heap;
	}
	if (last) {
		atomic_store(&last_sample, 2);
	}
}

/* Was the capture window open until now (capture itself is already off)? */
static bool window_open_at(uint64_t now)
{
	uint64_t w[64][2];
	size_t n = isc_capture_windows(w, 64, now);
	return n > 0 && w[n - 1][1] == now;
}

/* Final flush, on the flushing thread, before the collector stops: one more tick,
 * taken by the collector (the only writer of the samplers' state). */
void isc_cpu_time_flush(void)
{
	if (!isc_collector_running() || isc_collector_tid() == (uint32_t)gettid() ||
	    !window_open_at(isc_now())) {
		return;
	}
	atomic_store(&last_sample, 1);
	uint64_t deadline = isc_kernel_now() + 100000000u;
	while (atomic_load(&last_sample) == 1 && isc_kernel_now() < deadline) {
		isc_collector_wake();
		isc_kernel_sleep(200000);
	}
}

bool isc_heap_report(struct isc_heap_report *r)
{
	if (!isc_host_malloc_on) {
		return false;
	}
	r->live_at_end = live_heap();
	r->peak_sampled = r->live_at_end > peak_heap ? r->live_at_end : peak_heap;
	return true;
}

void isc_cpu_time_init(void)
{
	id_cpu = isc_intern_cstr("cpu_time");
	id_wait = isc_intern_cstr("wait_time");
	id_heap = isc_intern_cstr("live_heap");
	isc_collector_add_tick(tick);
}
