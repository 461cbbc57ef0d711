/* SPDX-License-Identifier: MIT */
/*
 * Activity buffers. Records go into the client's current buffer (asked for with
 * its request callback, under the CUPTI lock) and full buffers go back through
 * its completion callback (never under the lock): from a worker thread every
 * SIMGPU_CUPTI_FLUSH_MS (or cuptiActivityFlushPeriod) when full, or from
 * cuptiActivityFlushAll. A record that finds no room - the client declined a
 * buffer, gave one too small for it, or SIMGPU_CUPTI_BUFFER_LIMIT buffers were
 * already requested - is dropped and counted, as the real CUPTI does.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/simgpu/cupti/cupti-sim.h"

static pthread_cond_t worker_wake = PTHREAD_COND_INITIALIZER;
/* Buffers the worker took and is handing back outside the lock: a flush waits for
 * them, as cuptiActivityFlushAll returns only after their completion callbacks. */
static unsigned delivering;
static pthread_cond_t delivered = PTHREAD_COND_INITIALIZER;
static pthread_t worker;
static bool worker_running;
static bool worker_stop;
static pid_t worker_pid;
static bool in_request;

size_t isc_cupti_record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	default:
		return 0;
	}
}

static size_t aligned(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void queue_full(struct isc_cupti_buf *b)
{
	b->next = NULL;
	if (isc_cupti.full_tail) {
		isc_cupti.full_tail->next = b;
	} else {
		isc_cupti.full_head = b;
	}
	isc_cupti.full_tail = b;
	pthread_cond_signal(&worker_wake);
}

/* Asks the client for a buffer. Caller holds the lock. */
static bool request_buffer(void)
{
	struct isc_cupti_buf *b;
	uint8_t *data = NULL;
	size_t size = 0;
	size_t max_records = 0;
	uint64_t start;

	if (!isc_cupti.request || in_request ||
	    (isc_cupti.buffer_limit && isc_cupti.buffers_requested >= isc_cupti.buffer_limit)) {
		return false;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		return false;
	}
	isc_cupti.buffers_requested++;
	start = isc_cupti_now_mono();
	in_request = true;
	isc_cupti.request(&data, &size, &max_records);
	in_request = false;
	if (!data) {
		free(b);
		return false;
	}
	b->data = data;
	b->size = size;
	b->max_records = max_records;
	isc_cupti.cur = b;
	isc_cupti_record_overhead(CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST, start,
				  isc_cupti_now_mono());
	return true;
}

/* Copies one complete record into the current buffer. Caller holds the lock. */
static void write_record(const union isc_cupti_record *rec)
{
	size_t size = isc_cupti_record_size(rec->any.kind);
	size_t need = aligned(size);
	struct isc_cupti_buf *b;

	for (;;) {
		if (!isc_cupti.cur && !request_buffer()) {
			isc_cupti.dropped++;
			return;
		}
		b = isc_cupti.cur;
		if (b == NULL) {
			/* request_buffer() records its OVERHEAD record through the (recursive)
			 * lock, which retires pending records first: they may have filled and
			 * queued the buffer it just got. Ask again. */
			continue;
		}
		if (b->used + need <= b->size &&
		    (b->max_records == 0 || b->n_records < b->max_records)) {
			memcpy(b->data + b->used, rec, size);
			memset(b->data + b->used + size, 0, need - size);
			b->used += need;
			b->n_records++;
			return;
		}
		isc_cupti.cur = NULL;
		queue_full(b);
		if (b->n_records == 0) {
			isc_cupti.dropped++; /* the buffer cannot hold even this record */
			return;
		}
	}
}

static void heap_swap(size_t a, size_t b)
{
	struct isc_cupti_pending t = isc_cupti.pending[a];

	isc_cupti.pending[a] = isc_cupti.pending[b];
	isc_cupti.pending[b] = t;
}

static void heap_push(const union isc_cupti_record *rec, uint64_t ready_ns)
{
	size_t i;

	if (isc_cupti.n_pending == isc_cupti.cap_pending) {
		size_t cap = isc_cupti.cap_pending ? isc_cupti.cap_pending * 2 : 256;
		struct isc_cupti_pending *grown = realloc(isc_cupti.pending, cap * sizeof(*grown));

		if (!grown) {
			isc_cupti.dropped++;
			return;
		}
		isc_cupti.pending = grown;
		isc_cupti.cap_pending = cap;
	}
	i = isc_cupti.n_pending++;
	isc_cupti.pending[i].ready_ns = ready_ns;
	isc_cupti.pending[i].rec = *rec;
	while (i > 0 && isc_cupti.pending[(i - 1) / 2].ready_ns > isc_cupti.pending[i].ready_ns) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_pop(void)
{
	size_t i = 0;

	isc_cupti.pending[0] = isc_cupti.pending[--isc_cupti.n_pending];
	for (;;) {
		size_t l = 2 * i + 1;
		size_t r = l + 1;
		size_t m = i;

		if (l < isc_cupti.n_pending &&
		    isc_cupti.pending[l].ready_ns < isc_cupti.pending[m].ready_ns) {
			m = l;
		}
		if (r < isc_cupti.n_pending &&
		    isc_cupti.pending[r].ready_ns < isc_cupti.pending[m].ready_ns) {
			m = r;
		}
		if (m == i) {
			return;
		}
		heap_swap(i, m);
		i = m;
	}
}

static void start_worker_locked(void);

/* Takes the lock. */
void isc_cupti_put(const union isc_cupti_record *rec, uint64_t ready_ns)
{
	uint64_t now = isc_cupti_now_mono();

	pthread_mutex_lock(&isc_cupti.lock);
	isc_cupti_retire(now);
	if (ready_ns > now) {
		heap_push(rec, ready_ns);
	} else {
		write_record(rec);
	}
	start_worker_locked();
	pthread_mutex_unlock(&isc_cupti.lock);
}

/* Moves the records of operations finished by @p now_ns into buffers. Lock held. */
void isc_cupti_retire(uint64_t now_ns)
{
	while (isc_cupti.n_pending && isc_cupti.pending[0].ready_ns <= now_ns) {
		union isc_cupti_record rec = isc_cupti.pending[0].rec;

		heap_pop();
		write_record(&rec);
	}
}

/* A record flushed before its operation finished has no timing, as CUPTI documents. */
static void clear_times(union isc_cupti_record *rec)
{
	switch (rec->any.kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		rec->kernel.start = rec->kernel.end = rec->kernel.completed = 0;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		rec->memcpy.start = rec->memcpy.end = 0;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		rec->peer.start = rec->peer.end = 0;
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		rec->memset.start = rec->memset.end = 0;
		break;
	default:
		break;
	}
}

static void deliver(struct isc_cupti_buf *list)
{
	CUpti_BuffersCallbackCompleteFunc complete = isc_cupti.complete;

	while (list) {
		struct isc_cupti_buf *next = list->next;

		if (complete) {
			complete(NULL, 0, list->data, list->size, list->used);
		}
		free(list);
		list = next;
	}
}

static struct isc_cupti_buf *take_full(void)
{
	struct isc_cupti_buf *list = isc_cupti.full_head;

	isc_cupti.full_head = isc_cupti.full_tail = NULL;
	return list;
}

CUptiResult isc_cupti_flush(bool forced, bool deliver_empty)
{
	struct isc_cupti_buf *list;

	pthread_mutex_lock(&isc_cupti.lock);
	isc_cupti_retire(isc_cupti_now_mono());
	while (forced && isc_cupti.n_pending) {
		union isc_cupti_record rec = isc_cupti.pending[0].rec;

		heap_pop();
		clear_times(&rec);
		write_record(&rec);
	}
	if (isc_cupti.cur && (isc_cupti.cur->n_records || deliver_empty)) {
		queue_full(isc_cupti.cur);
		isc_cupti.cur = NULL;
	}
	list = take_full();
	pthread_mutex_unlock(&isc_cupti.lock);
	deliver(list);
	pthread_mutex_lock(&isc_cupti.lock);
	while (delivering > 0 && worker_pid == getpid()) {
		pthread_cond_wait(&delivered, &isc_cupti.lock);
	}
	pthread_mutex_unlock(&isc_cupti.lock);
	return CUPTI_SUCCESS;
}

static void *worker_main(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&isc_cupti.lock);
	while (!worker_stop) {
		struct timespec until;
		struct isc_cupti_buf *list;
		uint64_t period = (uint64_t)isc_cupti.flush_period_ms * 1000000u;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(period / 1000000000u);
		until.tv_nsec += (long)(period % 1000000000u);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&worker_wake, &isc_cupti.lock, &until);
		isc_cupti_retire(isc_cupti_now_mono());
		list = take_full();
		delivering += list != NULL;
		pthread_mutex_unlock(&isc_cupti.lock);
		deliver(list);
		pthread_mutex_lock(&isc_cupti.lock);
		if (list != NULL) {
			delivering--;
			pthread_cond_broadcast(&delivered);
		}
	}
	pthread_mutex_unlock(&isc_cupti.lock);
	return arg;
}

/* Lazily, like the real library's worker: a process that records nothing has none. */
static void start_worker_locked(void)
{
	if (worker_running && worker_pid == getpid()) {
		return;
	}
	worker_stop = false;
	worker_running = pthread_create(&worker, NULL, worker_main, NULL) == 0;
	worker_pid = getpid();
}

void isc_cupti_worker_stop(void)
{
	bool join;

	pthread_mutex_lock(&isc_cupti.lock);
	join = worker_running && worker_pid == getpid();
	worker_stop = true;
	worker_running = false;
	pthread_cond_signal(&worker_wake);
	pthread_mutex_unlock(&isc_cupti.lock);
	if (join) {
		pthread_join(worker, NULL);
	}
}

__attribute__((destructor)) static void stop_at_exit(void)
{
	isc_cupti_worker_stop();
}

CUPTI_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
						    CUpti_Activity **record)
{
	size_t offset = 0;
	size_t size;
	CUpti_Activity *r;

	if (!buffer || !record) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (*record) {
		offset = (size_t)((uint8_t *)*record - buffer) +
			 aligned(isc_cupti_record_size((*record)->kind));
	}
	if (offset >= validBufferSizeBytes) {
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	r = (CUpti_Activity *)(buffer + offset);
	size = isc_cupti_record_size(r->kind);
	if (size == 0 || offset + size > validBufferSizeBytes) {
		return CUPTI_ERROR_INVALID_KIND;
	}
	*record = r;
	return CUPTI_SUCCESS;
}
