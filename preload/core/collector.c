/* SPDX-License-Identifier: MIT */
#include "preload/core/collector.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "common/clock.h"
#include "common/config.h"
#include "preload/core/intern.h"
#include "preload/core/procfs.h"
#include "preload/core/threads.h"
#include "common/log.h"
#include "format/spill.h"

#define MAX_TICKS 8
#define STOP_TIMEOUT_NS (2 * 1000000000ull)
#define ORPHAN_CHECK_NS (100 * 1000000ull) /* 10 thread counts a second (threads.c) */
#define DOZE_NS (1000000000ull)		   /* the tick of a process that records nothing */
#define IDLE_TICKS 10 /* ticks with nothing recorded before the collector dozes */

static isc_tick_fn ticks[MAX_TICKS];
void (*isc_spill_prepare)(struct isc_event *recs, uint32_t n);
static _Atomic unsigned n_ticks;

static pthread_t thread;
static _Atomic bool running;
static _Atomic bool starting;
static _Atomic bool stop_requested;
static _Atomic bool stopped_ack;
static _Atomic bool counted; /* the thread has counted itself (isc_threads_own) */
static _Atomic uint32_t thread_tid;
static _Atomic int wake_word;
static _Atomic bool snapshot_requested;
static _Atomic uint64_t wakeups;

static struct isc_collector_sink sink;
static struct isc_chunk *waiting; /* full chunks not yet written (spilling, below) */
static int last_error;		  /* the last spill's, 0: written */
static int owner_pid;
static bool owner_eager;

void isc_collector_set_owner(int pid, bool eager)
{
	owner_pid = pid;
	owner_eager = eager;
}

/* Never after the final flush (capture is off then), never in a vfork child. */
void isc_collector_start_eager(void)
{
	if (isc_collector_running() || !owner_eager || isc_fork_quiet() ||
	    !atomic_load_explicit(&isc_capture.on, memory_order_relaxed) ||
	    syscall(SYS_getpid) != owner_pid) {
		return;
	}
	isc_collector_start();
}

void isc_collector_set_sink(const struct isc_collector_sink *to)
{
	sink = *to;
}

void isc_collector_add_tick(isc_tick_fn fn)
{
	unsigned i = atomic_fetch_add(&n_ticks, 1);
	if (i < MAX_TICKS) {
		ticks[i] = fn;
	}
}

bool isc_collector_running(void)
{
	return atomic_load_explicit(&running, memory_order_acquire);
}

uint32_t isc_collector_tid(void)
{
	return atomic_load(&thread_tid);
}

void isc_collector_wake(void)
{
	atomic_fetch_add_explicit(&wake_word, 1, memory_order_release);
	syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void isc_collector_request_snapshot(void)
{
	atomic_store(&snapshot_requested, true);
	isc_collector_wake();
}

static void sleep_for(uint64_t ns)
{
	int w = atomic_load_explicit(&wake_word, memory_order_acquire);
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, w, &ts, NULL, 0);
}

/* Records published so far by every thread: events (the collector's own counter
 * records among them) and CPU samples. Plain counters of their owners, read relaxed:
 * only a change matters. */
static uint64_t recorded_so_far(void)
{
	uint64_t sum = 0;
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		sum += __atomic_load_n(&t->recorded, __ATOMIC_RELAXED) +
		       __atomic_load_n(&t->samples, __ATOMIC_RELAXED);
	}
	return sum;
}

/*
 * Between two ticks. A process that recorded nothing for IDLE_TICKS ticks - no hook,
 * no CPU sample, and no change the samplers saw (the CPU-time sampler records a
 * thread's clock only when it moved, so a thread that computes without calling
 * anything hooked still counts) - has nothing to spill or sample: the collector then
 * dozes for DOZE_NS instead of a tick. The first commit that finds it dozing wakes it
 * (isc_buffer_rouse); the test and the wake are not ordered against this one, so a
 * record that races with the start of a doze waits at most DOZE_NS, as every ticker
 * (windows, segments, the orphan check) may then do.
 */
static void sleep_tick(void)
{
	static uint64_t last_seen;
	static unsigned idle;
	uint64_t tick = isc_config.tick_ns ? isc_config.tick_ns : 10000000u;
	uint64_t seen = recorded_so_far();
	idle = seen == last_seen ? idle + 1 : 0;
	last_seen = seen;
	if (idle < IDLE_TICKS || tick >= DOZE_NS) {
		sleep_for(tick);
		return;
	}
	atomic_store(&isc_collector_dozing, 1);
	if (recorded_so_far() == seen) {
		sleep_for(DOZE_NS);
	}
	atomic_store(&isc_collector_dozing, 0);
}

uint64_t isc_collector_wakeups(void)
{
	return atomic_load_explicit(&wakeups, memory_order_relaxed);
}

/*
 * The program's last thread has gone (its main thread ended with pthread_exit, or a
 * fork child's only thread returned) and only the library's threads are left. Without
 * them glibc would have ended the process with exit(0) as that thread ended; do it for
 * it, after marking the collector stopped so that the exit handlers' flush writes the
 * trace from this thread.
 */
static bool program_gone(uint64_t now)
{
	static uint64_t next;
	if (now < next) {
		return false;
	}
	next = now + ORPHAN_CHECK_NS;
	return isc_threads_orphaned();
}

static _Noreturn void exit_for_the_program(void)
{
	isc_threads_own(-1);
	atomic_store(&thread_tid, 0);
	atomic_store(&running, false);
	atomic_store(&starting, false);
	exit(0);
}

static void *collector_main(void *arg)
{
	(void)arg;
	sigset_t all;
	/* Signals are the application's business: never let one land on our thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	isc_tls_guard = 1; /* nothing this thread does is the application's */
	/* every file the collector opens (spill, segments, snapshots, windows, procfs) is
	 * in a table of its own: never seen, inherited or closed by the program */
	isc_threads_hide_fds();
	atomic_store(&thread_tid, (uint32_t)syscall(SYS_gettid));
	prctl(PR_SET_NAME, "inferscope", 0, 0, 0);
	isc_threads_own(1);
	atomic_store(&counted, true);

	while (!atomic_load_explicit(&stop_requested, memory_order_acquire)) {
		uint64_t now = isc_now();
		unsigned n = atomic_load(&n_ticks);
		for (unsigned i = 0; i < n && i < MAX_TICKS; i++) {
			ticks[i](now);
		}
		if (isc_config.spill) {
			isc_collector_spill(false);
		}
		if (atomic_exchange(&snapshot_requested, false) && sink.snapshot) {
			sink.snapshot("signal");
		}
		if (program_gone(now)) {
			exit_for_the_program();
		}
		sleep_tick();
		atomic_fetch_add_explicit(&wakeups, 1, memory_order_relaxed);
	}
	isc_threads_own(-1);
	atomic_store_explicit(&stopped_ack, true, memory_order_release);
	return NULL;
}

void isc_collector_start(void)
{
	if (atomic_load_explicit(&running, memory_order_acquire) ||
	    atomic_exchange(&starting, true)) {
		return;
	}
	isc_buffer_on_rouse = isc_collector_wake; /* before it can doze */
	atomic_store(&stop_requested, false);
	atomic_store(&stopped_ack, false);
	atomic_store(&counted, false);
	int r = isc_threads_start(&thread, 256 * 1024, collector_main, NULL);
	if (r != 0) {
		isc_error("cannot start the collector thread (%s); events are kept in memory "
			  "until exit",
			  strerror(r));
		return;
	}
	isc_threads_await_start(&counted);
	atomic_store_explicit(&running, true, memory_order_release);
}

bool isc_collector_stop(void)
{
	if (!atomic_load_explicit(&running, memory_order_acquire)) {
		return true;
	}
	if ((uint32_t)syscall(SYS_gettid) == atomic_load(&thread_tid)) {
		return false; /* a flush from the collector itself cannot wait for it */
	}
	atomic_store_explicit(&stop_requested, true, memory_order_release);
	uint64_t deadline = isc_kernel_now() + STOP_TIMEOUT_NS;
	while (!atomic_load_explicit(&stopped_ack, memory_order_acquire)) {
		isc_collector_wake();
		if (isc_kernel_now() > deadline) {
			isc_error("the collector thread did not stop in time; writing the trace "
				  "without it");
			return false;
		}
		isc_kernel_sleep(200000);
	}
	pthread_join(thread, NULL);
	atomic_store(&running, false);
	atomic_store(&starting, false);
	return true;
}

_Atomic bool isc_collector_paused;

bool isc_collector_pause(void)
{
	if (!isc_collector_running() || !isc_collector_stop()) {
		return false;
	}
	atomic_store(&isc_collector_paused, true);
	return true;
}

void isc_collector_resume_due(void)
{
	bool paused = true;
	if (!atomic_load_explicit(&isc_collector_paused, memory_order_relaxed) ||
	    isc_fork_quiet() || syscall(SYS_getpid) != owner_pid ||
	    !atomic_compare_exchange_strong(&isc_collector_paused, &paused, false)) {
		return; /* (a vfork child shares our memory: never start threads there) */
	}
	int saved = errno;
	isc_collector_start();
	errno = saved;
}

void isc_collector_reset_after_fork(void)
{
	atomic_store(&isc_collector_paused, false);
	isc_threads_reset_after_fork();
	atomic_store(&running, false);
	atomic_store(&starting, false);
	atomic_store(&stop_requested, false);
	atomic_store(&stopped_ack, false);
	atomic_store(&thread_tid, 0);
	atomic_store(&snapshot_requested, false);
	atomic_store(&isc_collector_dozing, 0);
	atomic_store(&wakeups, 0);
	waiting = NULL; /* the parent's chunks: the child's buffers start over */
	last_error = 0;
}

/* ---- spilling ---- */

/* Queues the records [c->spilled, upto) of chunk c; they count as spilled once the
 * batch is written (batch_flush). */
static int queue_range(struct isc_spill *s, struct isc_chunk *c, uint32_t upto,
		       struct isc_spill_events *hdr)
{
	if (upto <= c->spilled) {
		return 0;
	}
	if (isc_spill_prepare) {
		isc_spill_prepare(&c->rec[c->spilled], upto - c->spilled);
	}
	hdr->tid = c->tid;
	hdr->count = upto - c->spilled;
	return isc_spill_queue(s, ISC_BLK_EVENTS, hdr, sizeof(*hdr), &c->rec[c->spilled],
			       (size_t)hdr->count * sizeof(struct isc_event));
}

static bool thread_gone(struct isc_thread *t)
{
	if (atomic_load_explicit(&t->state, memory_order_acquire) != ISC_THREAD_EXITING) {
		return false;
	}
	return syscall(SYS_tgkill, getpid(), t->tid, 0) != 0 && errno == ESRCH;
}

#define MAX_BATCH 16 /* chunk ranges per writev batch (3 iovecs each + headers) */

struct batch {
	struct isc_chunk *chunk[MAX_BATCH];
	uint32_t upto[MAX_BATCH];
	struct isc_spill_events hdr[MAX_BATCH];
	unsigned n;
};

/* Writes the batch. Only then do its records count as spilled: a write that fails (a
 * full disk, a file-size limit) leaves them in memory, to be written at a later tick. */
static int batch_flush(struct isc_spill *s, struct batch *b)
{
	int r = isc_spill_sync(s);
	for (unsigned i = 0; i < b->n && r == 0; i++) {
		b->chunk[i]->spilled = b->upto[i];
	}
	b->n = 0;
	return r;
}

static int spill_strings(struct isc_spill *s);

/* Continuous mode: a new segment when the open one is full or its time is up. */
static int make_room(struct isc_spill **s, struct batch *b, uint64_t bytes)
{
	uint64_t strings = isc_intern_published() - (*s)->strings_upto;
	if (sink.full == NULL || !sink.full(*s, bytes ? bytes + strings : 0)) {
		return 0;
	}
	int r = batch_flush(*s, b);
	struct isc_spill *n = r == 0 ? sink.rotate() : NULL;
	if (n == NULL) {
		return r < 0 ? r : -EIO;
	}
	*s = n;
	r = isc_spill_acquire(n);
	return r < 0 ? r : spill_strings(n);
}

static int batch_add(struct isc_spill **sp, struct batch *b, struct isc_chunk *c, uint32_t upto)
{
	if (upto > c->spilled) {
		uint64_t bytes = sizeof(struct isc_spill_block) + sizeof(struct isc_spill_events) +
				 (uint64_t)(upto - c->spilled) * sizeof(struct isc_event);
		int r = make_room(sp, b, bytes);
		if (r < 0) {
			return r;
		}
	}
	struct isc_spill *s = *sp;
	if (b->n == MAX_BATCH) {
		int r = batch_flush(s, b);
		if (r < 0) {
			return r;
		}
	}
	int r = queue_range(s, c, upto, &b->hdr[b->n]);
	if (r == 0) {
		b->chunk[b->n] = c;
		b->upto[b->n] = upto > c->spilled ? upto : c->spilled;
		b->n++;
	}
	return r;
}

static int spill_strings(struct isc_spill *s)
{
	static uint64_t hdr; /* one STRINGS block at a time: its header must outlive the queue */
	uint64_t pub = isc_intern_published();
	if (pub <= s->strings_upto) {
		return 0;
	}
	int r = isc_spill_sync(s);
	hdr = s->strings_upto;
	if (r == 0) {
		r = isc_spill_queue(s, ISC_BLK_STRINGS, &hdr, sizeof(hdr),
				    isc_intern_arena() + s->strings_upto, pub - s->strings_upto);
	}
	if (r == 0) {
		r = isc_spill_sync(s);
	}
	if (r == 0) {
		s->strings_upto = pub;
	}
	return r;
}

/* Full chunks not yet written, oldest first (waiting): those a failed write left, then
 * those filled since (the collector's, one spiller at a time). */
static struct isc_chunk *take_full(void)
{
	struct isc_chunk *full = isc_full_take();
	struct isc_chunk *rev = NULL;
	while (full) {
		struct isc_chunk *next = full->next_full;
		full->next_full = rev;
		rev = full;
		full = next;
	}
	struct isc_chunk **end = &waiting;
	while (*end) {
		end = &(*end)->next_full;
	}
	*end = rev;
	return waiting;
}

int isc_collector_spill_error(void)
{
	return last_error;
}

uint64_t isc_collector_unspilled(void)
{
	uint64_t n = 0;
	for (struct isc_chunk *c = waiting; c; c = c->next_full) {
		n += atomic_load(&c->head) - c->spilled;
	}
	for (struct isc_chunk *c = isc_full_peek(); c; c = c->next_full) {
		n += atomic_load(&c->head) - c->spilled;
	}
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		struct isc_chunk *c = atomic_load(&t->chunk), *sc = atomic_load(&t->sample_chunk);
		n += c ? atomic_load(&c->head) - c->spilled : 0;
		n += sc ? atomic_load(&sc->head) - sc->spilled : 0;
	}
	return n;
}

static int spill_all(bool final);

int isc_collector_spill(bool final)
{
	int r = spill_all(final);
	if (r < 0 && last_error == 0) {
		isc_error("cannot write the spill (%s): events wait in memory (at most "
			  "INFERSCOPE_MAX_MEMORY) and the write is tried again",
			  strerror(-r));
	}
	last_error = r < 0 ? r : 0;
	return r;
}

static int spill_all(bool final)
{
	struct isc_spill *s = sink.spill ? sink.spill() : NULL;
	static struct batch b; /* one spiller at a time (see collector.h) */
	if (s == NULL) {
		return -EIO;
	}
	int r = isc_spill_acquire(s);
	if (r < 0) {
		/* no descriptor to be had now: the chunks stay queued for the next tick */
		return r;
	}
	/* 1. full chunks, in the order they filled */
	struct isc_chunk *rev = take_full();
	/* Strings go first so that a spill cut short by SIGKILL names what it holds; the
	 * trace writer loads every STRINGS block before any event, so order is not
	 * otherwise needed. */
	b.n = 0;
	r = make_room(&s, &b, 0);
	if (r == 0) {
		r = spill_strings(s);
	}
	for (struct isc_chunk *c = rev; c && r == 0; c = c->next_full) {
		r = batch_add(&s, &b, c, atomic_load_explicit(&c->head, memory_order_acquire));
	}
	if (r == 0) {
		r = batch_flush(s, &b);
	}
	/* a full chunk whose records are all written goes back to the free list; the
	 * others wait for the next try */
	b.n = 0;
	struct isc_chunk **tail = &waiting;
	waiting = NULL;
	for (struct isc_chunk *c = rev, *next; c; c = next) {
		next = c->next_full;
		if (c->spilled == atomic_load_explicit(&c->head, memory_order_acquire)) {
			isc_chunk_release(c);
		} else {
			*tail = c;
			tail = &c->next_full;
		}
	}
	*tail = NULL;
	for (struct isc_thread *t = isc_registry_first(); t && r == 0; t = t->next) {
		struct isc_chunk *c = atomic_load_explicit(&t->chunk, memory_order_acquire);
		struct isc_chunk *sc = atomic_load_explicit(&t->sample_chunk, memory_order_acquire);
		if (c == NULL && sc == NULL) {
			continue;
		}
		bool gone = !final && thread_gone(t);
		if (c != NULL) {
			uint32_t head = atomic_load_explicit(&c->head, memory_order_acquire);
			r = batch_add(&s, &b, c, head);
		}
		if (sc != NULL && r == 0) {
			uint32_t head = atomic_load_explicit(&sc->head, memory_order_acquire);
			r = batch_add(&s, &b, sc, head);
		}
		if (r == 0 && gone) {
			r = batch_flush(s, &b);
			if (r == 0) {
				atomic_store(&t->chunk, NULL);
				atomic_store(&t->sample_chunk, NULL);
				atomic_store(&t->state, ISC_THREAD_GONE);
				if (c != NULL) {
					isc_chunk_release(c);
				}
				if (sc != NULL) {
					isc_chunk_release(sc);
				}
			}
		}
	}
	if (r == 0) {
		r = batch_flush(s, &b);
	}
	/* 2. the published part of every live chunk, then the strings they refer to */
	if (r == 0) {
		r = spill_strings(s);
	}
	isc_spill_release(s); /* no descriptor of ours in the program's table between ticks */
	return r;
}
