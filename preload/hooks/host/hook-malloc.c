/* SPDX-License-Identifier: MIT */
/*
 * The malloc family: malloc, free, calloc, realloc, reallocarray, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc.
 *
 * Real functions come from dlsym(RTLD_NEXT), so a tcmalloc or jemalloc preloaded
 * after us keeps serving the program. dlsym itself may call calloc: until the real
 * functions are known, allocations come from the library's arena (core/arena.h), or
 * where it has none from a bump pool in .bss, which free() recognises (and ignores).
 *
 * The fast path is the point of this file: a malloc+free pair must stay within 2x
 * of glibc's ~7 ns tcache pair. So it reads no clock, takes no lock, does no atomic
 * operation and touches no TLS but the thread pointer and the guard: it updates
 * the thread's exact counters with plain stores and decrements a byte countdown.
 * Only when the countdown expires (Poisson byte sampling, sampling.h) or the size
 * reaches INFERSCOPE_MALLOC_THRESHOLD does the slow path read the clock and record
 * a memory_event. Live bytes need the size of what is freed: malloc_usable_size()
 * of the real allocator gives it, and counting usable sizes on both sides keeps
 * allocated - freed exact. For glibc's own malloc that size is read from the
 * chunk header inline (see usable()), which is a quarter of the hooks' cost saved.
 *
 * malloc and free test one flag (hot.fast) and then know all that the general path
 * checks: the real functions are resolved, chunk sizes are glibc's, no pool block
 * exists; what is left is the thread, its guard, the arena's range and NULL. The
 * large-allocation threshold costs nothing there: the countdown never holds more than
 * the threshold - 1 bytes (the rest waits in `spare`), so an allocation that large
 * expires it, and the expiry (alloc_expired) tells a large one from the cap and from
 * the sample point.
 *
 * errno is the application's: the fast path never touches it and the slow path
 * restores it, so a failed malloc still leaves ENOMEM.
 *
 * The library's own allocations (the guard raised: its threads, its flush, the libc
 * functions it calls) come from its own arena (core/arena.h), and a pointer of that
 * arena goes back there whoever frees or reallocates it: the program's allocator
 * never holds, nor is shaped by, a byte of ours.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "preload/core/arena.h"
#include "preload/hooks/host/host.h"
#include "preload/core/export.h"
#include "common/log.h"
#include "preload/hooks/host/sampling.h"

/* Declared by <malloc.h>, which also declares things we do not want here. */
void *memalign(size_t align, size_t n);
void *pvalloc(size_t n);

struct real_malloc {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable)(void *);
};

static void *boot_malloc(size_t n);
static void boot_free(void *p);

/* malloc and free start as the bootstrap's, so that their fast paths need no test */
static struct real_malloc real = { .malloc = boot_malloc, .free = boot_free };
static _Atomic bool resolving;
static bool resolved;

/* Read on every call: one cache line. */
static _Alignas(64) struct {
	bool fast; /* malloc's and free's fast paths (update_fast) */
	bool on;
	bool glibc_chunks;	 /* usable sizes read from glibc's chunk headers (usable()) */
	uint64_t threshold;	 /* allocations this large are always events */
	uint64_t free_threshold; /* so are releases (0: every one, with sample=0) */
	uint64_t mean;		 /* sampling mean, 0 = every allocation */
	int64_t cap;		 /* the most a countdown holds: threshold - 1 */
} hot;

bool isc_host_malloc_on;
uint64_t isc_host_map_threshold = UINT64_MAX;

/* ---- bootstrap pool ---- */

#define POOL_BYTES (256u << 10)
static _Alignas(64) unsigned char pool[POOL_BYTES];
static _Atomic size_t pool_top;
static _Atomic bool pool_used;

static inline bool in_pool(const void *p)
{
	return (uintptr_t)p - (uintptr_t)pool < POOL_BYTES;
}

/* Each block is preceded by its size, for realloc. Pool memory is never reused, and
 * .bss is zero: calloc needs no memset. */
static void *pool_alloc(size_t n, size_t align)
{
	/* free's fast path does not look for pool blocks: it is off for good once one exists */
	atomic_store(&pool_used, true);
	__atomic_store_n(&hot.fast, false, __ATOMIC_SEQ_CST);
	size_t top = atomic_load_explicit(&pool_top, memory_order_relaxed);
	align = align < 16 ? 16 : align;
	for (;;) {
		uintptr_t base = (uintptr_t)pool + top + sizeof(size_t);
		uintptr_t start = (base + align - 1) & ~(uintptr_t)(align - 1);
		size_t end = (size_t)(start - (uintptr_t)pool) + n;
		if (n > POOL_BYTES || end > POOL_BYTES) {
			errno = ENOMEM;
			return NULL;
		}
		if (atomic_compare_exchange_weak(&pool_top, &top, end)) {
			memcpy((void *)(start - sizeof(size_t)), &n, sizeof(n));
			return (void *)start;
		}
	}
}

static size_t pool_size(const void *p)
{
	size_t n;
	memcpy(&n, (const char *)p - sizeof(size_t), sizeof(n));
	return n;
}

/* Before the real functions are known: the arena, or the pool where it has no region.
 * A block of the arena stays there whoever frees or resizes it. */
static void *boot_alloc(size_t n, size_t align)
{
	void *p = isc_arena_alloc(n, align);
	return p != NULL || isc_arena_lo != 0 ? p : pool_alloc(n, align);
}

/* ---- resolution ---- */

/* An allocator without malloc_usable_size: freed sizes are unknown (see init). */
static size_t no_usable(void *p)
{
	(void)p;
	return 0;
}

static void resolve(void)
{
	/* A dlsym below that allocates lands here again: it gets the pool. So does a
	 * thread that allocates while another one resolves. */
	if (atomic_exchange(&resolving, true)) {
		return;
	}
	struct real_malloc r;
	r.free = isc_host_next("free");
	r.calloc = isc_host_next("calloc");
	r.realloc = isc_host_next("realloc");
	r.posix_memalign = isc_host_next("posix_memalign");
	r.aligned_alloc = isc_host_next("aligned_alloc");
	r.memalign = isc_host_next("memalign");
	r.valloc = isc_host_next("valloc");
	r.pvalloc = isc_host_next("pvalloc");
	r.usable = isc_host_next("malloc_usable_size");
	r.usable = r.usable ? r.usable : no_usable;
	r.malloc = isc_host_next("malloc");
	if (r.malloc == NULL || r.free == NULL) {
		/* no allocator to forward to: the bootstrap's stay (an arena that may fill) */
		atomic_store(&resolving, false);
		return;
	}
	real.free = r.free;
	real.calloc = r.calloc;
	real.realloc = r.realloc;
	real.posix_memalign = r.posix_memalign;
	real.aligned_alloc = r.aligned_alloc;
	real.memalign = r.memalign;
	real.valloc = r.valloc;
	real.pvalloc = r.pvalloc;
	real.usable = r.usable;
	real.malloc = r.malloc;
	/* last: its being set is what the other hooks test */
	__atomic_store_n(&resolved, true, __ATOMIC_RELEASE);
	atomic_store(&resolving, false);
}

static inline bool ready(void)
{
	if (__builtin_expect(__atomic_load_n(&resolved, __ATOMIC_ACQUIRE), 1)) {
		return true;
	}
	resolve();
	return __atomic_load_n(&resolved, __ATOMIC_ACQUIRE);
}

/* real.malloc and real.free until resolved (malloc's and free's fast paths call them
 * without asking) */
static void *boot_malloc(size_t n)
{
	return ready() ? real.malloc(n) : boot_alloc(n, 16);
}

static void boot_free(void *p)
{
	if (ready()) {
		real.free(p);
	}
}

/*
 * glibc keeps a chunk's size in the word before the block, with three flag bits;
 * the usable part is that size minus the header word, or minus two words for a
 * chunk of its own mapping (flag 0x2). malloc_usable_size() computes the same after
 * a call and a look at the next chunk's header (whether this one is in use, which
 * for a block we are handed or about to free it always is). hot.glibc_chunks is set
 * only when the real malloc is libc's and the computation matched its
 * malloc_usable_size on test blocks of every kind (init).
 */
/* libc's malloc is the real one: the computation is checked against its
 * malloc_usable_size on the program's own first blocks (VERIFY of them), and then used.
 * Test blocks of our own would change the program's heap (a large one freed moves
 * glibc's dynamic mmap threshold). */
static bool glibc_candidate;
static _Atomic int verify_left;
#define VERIFY 64

/* malloc and free may take their fast paths: counting on, chunk sizes glibc's, the
 * real functions resolved, a sampling mean (with 0, everything is an event) and no
 * pool block handed out (pool_alloc clears the flag; seen here after it set it). */
static void update_fast(void)
{
	bool fast = hot.on && hot.glibc_chunks && ready() && hot.threshold > 0;
	__atomic_store_n(&hot.fast, fast, __ATOMIC_SEQ_CST);
	if (atomic_load(&pool_used)) {
		__atomic_store_n(&hot.fast, false, __ATOMIC_SEQ_CST);
	}
}

static inline size_t chunk_usable(const void *p)
{
	size_t head;
	memcpy(&head, (const char *)p - sizeof(size_t), sizeof(head));
	/* minus one header word (the flags are the low 3 bits: subtracting 8 first leaves
	 * them), or two for a chunk of its own mapping, which is rare */
	_Static_assert(sizeof(size_t) == 8, "the chunk header's arithmetic is for 64 bits");
	size_t u = (head - sizeof(size_t)) & ~(size_t)7;
	if (__builtin_expect(head & 2, 0)) {
		u -= sizeof(size_t);
	}
	return u;
}

static __attribute__((noinline)) size_t usable_checked(void *p)
{
	size_t u = real.usable(p);
	if (glibc_candidate) {
		if (chunk_usable(p) != u) {
			glibc_candidate = false;
		} else if (atomic_fetch_sub(&verify_left, 1) == 1) {
			hot.glibc_chunks = true;
			update_fast();
		}
	}
	return u;
}

static inline size_t usable(void *p)
{
	return __builtin_expect(hot.glibc_chunks, 1) ? chunk_usable(p) : usable_checked(p);
}

/* The library at work (guard raised): from its arena; NULL only where no arena could
 * be reserved (then the real allocator, as before) or it is full. */
static inline bool ours(void)
{
	return __builtin_expect(isc_tls_guard != 0, 0);
}

static void *arena_or_real(size_t n, size_t align)
{
	void *p = isc_arena_alloc(n, align);
	if (p == NULL && isc_arena_lo == 0 && ready()) {
		return align <= 16 ? real.malloc(n) : real.memalign(align, n);
	}
	return p;
}

/* ---- recording ---- */

void isc_host_record_memory(struct isc_thread *t, unsigned op, const void *ptr, uint64_t bytes,
			    uint64_t weight)
{
	int saved = errno;
	isc_tls_guard++;
	uint64_t now = isc_now();
	if (isc_capturing(now)) {
		uint64_t pcs[ISC_EVENT_STACK_WORDS];
		uint16_t nf, npy;
		unsigned nw = isc_stacks_capture_event(pcs, ISC_EVENT_STACK_WORDS, &nf, &npy);
		unsigned n = 1 + isc_stack_records(nw);
		int node = isc_numa_node_now();
		struct isc_event *e = isc_event_reserve(ISC_EV_MEMORY, n);
		if (e) {
			e->ts = now;
			e->dur = 0;
			e->tid = t->tid;
			e->kind = ISC_EV_MEMORY;
			e->flags = isc_config.stacks ? ISC_EVF_STACK_TEXT : 0;
			e->name = 0;
			e->aux = 0;
			e->u.memory.ptr = (uintptr_t)ptr;
			e->u.memory.bytes = bytes;
			e->u.memory.weight = weight;
			e->u.memory.op = (uint16_t)op;
			e->u.memory.numa_node = (int16_t)node;
			e->u.memory.frames = nf;
			e->u.memory.py_frames = npy;
			isc_stacks_fill(e + 1, t->tid, pcs, nw);
			isc_event_commit(n);
			t->malloc.sampled++;
		}
		t->numa_node = node + 1;
	}
	isc_tls_guard--;
	errno = saved;
}

/* The countdown holds at most hot.cap bytes, the rest waits in m->spare. */
static void arm(struct isc_malloc_counters *m)
{
	if (m->countdown > hot.cap) {
		m->spare += m->countdown - hot.cap;
		m->countdown = hot.cap;
	}
}

/* The countdown expired (or was never set): draw the next gap, record if sampled. */
static void sample_alloc(struct isc_thread *t, unsigned op, const void *p, size_t n)
{
	struct isc_malloc_counters *m = &t->malloc;
	if (m->rng == 0) {
		/* first allocation of the thread: start the process, sample nothing yet */
		m->rng = isc_rand_seed(t->tid, isc_now());
		m->countdown = isc_sample_gap(&m->rng, hot.mean) - (int64_t)n;
		if (m->countdown >= 0) {
			return;
		}
	}
	/* Several sample points may fall inside one allocation: it is recorded once, and
	 * its weight accounts for that. hot.mean > 0 here: with 0, every allocation took
	 * the threshold path. */
	while (m->countdown < 0) {
		m->countdown += isc_sample_gap(&m->rng, hot.mean);
	}
	isc_host_record_memory(t, op, p, n, isc_sample_weight(n, hot.mean));
}

/* An allocation of n bytes took the capped countdown below 0: a large one (an event of
 * its own, outside the sampling: the countdown as it was), the cap reached (the spare
 * bytes go on counting), or the sample point. */
static __attribute__((noinline, cold)) void alloc_expired(struct isc_thread *t, unsigned op,
							  const void *p, size_t n)
{
	struct isc_malloc_counters *m = &t->malloc;
	if (n >= hot.threshold) {
		m->countdown += (int64_t)n;
		isc_host_record_memory(t, op, p, n, n);
		return;
	}
	m->countdown += m->spare;
	m->spare = 0;
	if (m->countdown < 0) {
		sample_alloc(t, op, p, n);
	}
	arm(m);
}

static __attribute__((noinline)) struct isc_thread *slow_thread(void)
{
	return isc_tls_guard == 0 && isc_tls_self == NULL ? isc_host_attach(true) : NULL;
}

/* The thread whose counters this call updates, or NULL (hooks off, our own call). */
static inline struct isc_thread *counting_thread(void)
{
	struct isc_thread *t = isc_tls_self;
	if (__builtin_expect(!hot.on, 0)) {
		return NULL;
	}
	if (__builtin_expect(t != NULL && isc_tls_guard == 0, 1)) {
		return t;
	}
	return slow_thread();
}

/* The counters of an allocation of n bytes (u usable) on thread t. The countdown's cap
 * catches a large allocation where the threshold is not 0 (the fast path's case); the
 * general path asks. */
static inline void count_alloc_usable(struct isc_thread *t, void *p, size_t n, size_t u,
				      unsigned op, bool ask_large)
{
	struct isc_malloc_counters *m = &t->malloc;
	/* bytes requested are the core's alloc_bytes; bytes allocated are live + freed */
	m->calls++;
	int64_t live = m->live + (int64_t)u;
	m->live = live;
	if (live > m->peak) {
		m->peak = live;
	}
	t->alloc_bytes += n;
	if (__builtin_expect((m->countdown -= (int64_t)n) < 0 || (ask_large && n >= hot.threshold),
			     0)) {
		alloc_expired(t, op, p, n);
	}
}

/* The counters of an allocation of n bytes that returned p (not NULL) on thread t. */
static inline void count_alloc(struct isc_thread *t, void *p, size_t n, unsigned op)
{
	count_alloc_usable(t, p, n, usable(p), op, true);
}

static inline void note_alloc(void *p, size_t n, unsigned op)
{
	struct isc_thread *t = counting_thread();
	if (__builtin_expect(t == NULL, 0)) {
		return;
	}
	if (__builtin_expect(p == NULL, 0)) {
		t->malloc.failed++;
		return;
	}
	count_alloc(t, p, n, op);
}

/* A release large enough to be an event, and the release: out of free's fast path,
 * which then keeps nothing across a call and ends in a jump. */
static __attribute__((noinline, cold)) void free_event(struct isc_thread *t, void *p, size_t u)
{
	isc_host_record_memory(t, ISC_MEM_FREE, p, u, u);
	real.free(p);
}

/* The counters of a release of p (not NULL, u usable bytes) on thread t; true when it
 * is an event (free_event). */
static inline bool count_free_usable(struct isc_thread *t, size_t u)
{
	struct isc_malloc_counters *m = &t->malloc;
	m->frees++;
	m->bytes_freed += u;
	m->live -= (int64_t)u;
	return __builtin_expect(u >= hot.free_threshold, 0);
}

/* ---- the hooks ---- */

/* malloc and free: no frame of their own (free ends in a jump; the unwinders read the
 * CFI), and plain adds to the counters, not SSE pairs of them, which cost more
 * instructions than they save. */
#if defined(__clang__)
#define HOT_HOOK /* clang has no optimize attribute (the sanitizer build) */
#else
#define HOT_HOOK __attribute__((optimize("omit-frame-pointer", "no-tree-slp-vectorize")))
#endif

/* malloc's rare cases, out of its fast path: a thread not attached yet, a failure. p
 * returned: a tail call, so that the fast path keeps nothing across it. */
static __attribute__((noinline)) void *note_malloc_slow(void *p, size_t n)
{
	note_alloc(p, n, ISC_MEM_MALLOC);
	return p;
}

/* malloc without the fast path's knowledge: the library's own call, the bootstrap,
 * counting off or not yet sure of the chunk sizes, a thread not attached yet, a
 * failure. */
static __attribute__((noinline)) void *malloc_general(size_t n)
{
	if (ours()) {
		return arena_or_real(n, 16);
	}
	if (__builtin_expect(!ready(), 0)) {
		return boot_alloc(n, 16);
	}
	void *p = real.malloc(n);
	if (hot.on) {
		note_alloc(p, n, ISC_MEM_MALLOC);
	}
	return p;
}

/* malloc off its fast path: with counting off, forwarded at once (the guard still sends
 * the library's own to its arena); the rest in malloc_general. */
static __attribute__((noinline)) HOT_HOOK void *malloc_slow(size_t n)
{
	if (!hot.on && !ours() && __atomic_load_n(&resolved, __ATOMIC_ACQUIRE)) {
		return real.malloc(n);
	}
	return malloc_general(n);
}

/* The fast path proper (hot.fast, the guard 0): a function of its own, so that malloc
 * itself saves no register before it knows which path it takes. */
static __attribute__((noinline)) HOT_HOOK void *malloc_fast(size_t n)
{
	void *p = real.malloc(n);
	/* The guard was 0 before the call and the real malloc leaves it as it found it (what
	 * it calls of ours raises and lowers it): only the thread and the result to check. */
	struct isc_thread *t = isc_tls_self;
	if (__builtin_expect(t == NULL || p == NULL, 0)) {
		return note_malloc_slow(p, n);
	}
	count_alloc_usable(t, p, n, chunk_usable(p), ISC_MEM_MALLOC, false);
	return p;
}

ISC_EXPORT HOT_HOOK void *malloc(size_t n)
{
	if (__builtin_expect(hot.fast && !ours(), 1)) {
		return malloc_fast(n);
	}
	return malloc_slow(n);
}

/* free without the fast path's knowledge (see malloc_slow) */
static __attribute__((noinline)) void free_slow(void *p)
{
	if (isc_arena_owns(p)) {
		isc_arena_free(p);
		return;
	}
	if (p == NULL || in_pool(p)) {
		return;
	}
	if (!hot.on) {
		real.free(p);
		return;
	}
	/* before the real release: the address may be reused by another thread at once */
	struct isc_thread *t = counting_thread();
	if (t != NULL) {
		size_t u = usable(p);
		if (count_free_usable(t, u)) {
			free_event(t, p, u);
			return;
		}
	}
	real.free(p);
}

ISC_EXPORT HOT_HOOK void free(void *p)
{
	if (__builtin_expect(!hot.fast, 0)) {
		free_slow(p);
		return;
	}
	if (isc_arena_owns(p)) {
		isc_arena_free(p);
		return;
	}
	if (p == NULL) {
		return;
	}
	struct isc_thread *t = isc_tls_self;
	if (__builtin_expect(t == NULL || isc_tls_guard != 0, 0)) {
		free_slow(p);
		return;
	}
	/* before the real release: the address may be reused by another thread at once */
	size_t u = chunk_usable(p);
	if (count_free_usable(t, u)) {
		free_event(t, p, u);
		return;
	}
	real.free(p);
}

ISC_EXPORT void *calloc(size_t k, size_t n)
{
	size_t bytes;
	if (ours()) {
		if (__builtin_mul_overflow(k, n, &bytes)) {
			errno = ENOMEM;
			return NULL;
		}
		void *p = arena_or_real(bytes, 16);
		if (p != NULL) {
			memset(p, 0, bytes);
		}
		return p;
	}
	if (__builtin_expect(!ready(), 0)) {
		if (__builtin_mul_overflow(k, n, &bytes)) {
			errno = ENOMEM;
			return NULL;
		}
		void *p = boot_alloc(bytes, 16);
		if (p != NULL && !in_pool(p)) {
			memset(p, 0,
			       bytes); /* the pool is .bss, never reused; the arena is reused */
		}
		return p;
	}
	void *p = real.calloc(k, n);
	note_alloc(p, __builtin_mul_overflow(k, n, &bytes) ? SIZE_MAX : bytes, ISC_MEM_CALLOC);
	return p;
}

/* A block of our arena stays there, whoever resizes it (the program's setenv growing
 * an environment the library extended, say). */
static void *arena_realloc(void *old, size_t n)
{
	if (old != NULL && n == 0) {
		isc_arena_free(old);
		return NULL;
	}
	void *p = isc_arena_alloc(n, 16);
	if (p != NULL && old != NULL) {
		size_t had = isc_arena_usable(old);
		memcpy(p, old, had < n ? had : n);
		isc_arena_free(old);
	}
	return p;
}

static void *do_realloc(void *old, size_t n, unsigned op)
{
	if (isc_arena_owns(old)) {
		return arena_realloc(old, n);
	}
	if (old == NULL && ours()) {
		return arena_or_real(n, 16);
	}
	if (__builtin_expect(!ready() || in_pool(old), 0)) {
		if (!in_pool(old)) {
			return boot_alloc(n, 16);
		}
		/* from the pool: move it to the real heap (or a new pool block) */
		void *p = ready() ? malloc(n) : boot_alloc(n, 16);
		if (p) {
			size_t had = pool_size(old);
			memcpy(p, old, had < n ? had : n);
		}
		return p;
	}
	struct isc_thread *t = old ? counting_thread() : NULL;
	size_t had = t ? usable(old) : 0;
	void *p = real.realloc(old, n);
	if (p == NULL && n > 0) {
		note_alloc(NULL, n, op); /* failed: the old block stays */
		return NULL;
	}
	if (t) {
		/* the old block is gone either way (moved, resized, or freed by realloc(p, 0)) */
		t->malloc.frees++;
		t->malloc.bytes_freed += had;
		t->malloc.live -= (int64_t)had;
	}
	if (p) {
		note_alloc(p, n, op);
	}
	return p;
}

ISC_EXPORT void *realloc(void *old, size_t n)
{
	return do_realloc(old, n, ISC_MEM_REALLOC);
}

/* reallocarray through the real realloc: the preloaded allocator may lack it, and
 * glibc's would then hand its own realloc a pointer it does not own. */
ISC_EXPORT void *reallocarray(void *old, size_t k, size_t n)
{
	size_t bytes;
	if (__builtin_mul_overflow(k, n, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(old, bytes, ISC_MEM_REALLOCARRAY);
}

ISC_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (ours()) {
		void *p = arena_or_real(n, align);
		if (p == NULL) {
			return ENOMEM;
		}
		*out = p;
		return 0;
	}
	if (__builtin_expect(!ready(), 0)) {
		void *p = boot_alloc(n, align);
		if (p == NULL) {
			return ENOMEM;
		}
		*out = p;
		return 0;
	}
	int r = real.posix_memalign(out, align, n);
	note_alloc(r == 0 ? *out : NULL, n, ISC_MEM_POSIX_MEMALIGN);
	return r;
}

ISC_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (ours()) {
		return arena_or_real(n, align);
	}
	if (__builtin_expect(!ready(), 0)) {
		return boot_alloc(n, align);
	}
	void *p = real.aligned_alloc(align, n);
	note_alloc(p, n, ISC_MEM_ALIGNED_ALLOC);
	return p;
}

ISC_EXPORT void *memalign(size_t align, size_t n)
{
	if (ours()) {
		return arena_or_real(n, align);
	}
	if (__builtin_expect(!ready(), 0)) {
		return boot_alloc(n, align);
	}
	void *p = real.memalign(align, n);
	note_alloc(p, n, ISC_MEM_MEMALIGN);
	return p;
}

ISC_EXPORT void *valloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (ours()) {
		return arena_or_real(n, page);
	}
	if (__builtin_expect(!ready(), 0)) {
		return boot_alloc(n, page);
	}
	void *p = real.valloc ? real.valloc(n) : real.memalign(page, n);
	note_alloc(p, n, ISC_MEM_VALLOC);
	return p;
}

ISC_EXPORT void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t rounded = n + page - 1 < n ? SIZE_MAX : (n + page - 1) & ~(page - 1);
	if (ours()) {
		return arena_or_real(rounded ? rounded : page, page);
	}
	if (__builtin_expect(!ready(), 0)) {
		return boot_alloc(rounded ? rounded : page, page);
	}
	void *p = real.pvalloc ? real.pvalloc(n) : real.memalign(page, rounded ? rounded : page);
	note_alloc(p, n, ISC_MEM_PVALLOC);
	return p;
}

/* ---- trace contributions and init ---- */

/* fork child: its counters describe its own life, like the core's alloc_bytes. */
void isc_hooks_malloc_fork_child(void)
{
	struct isc_thread *t = isc_tls_self;
	if (t) {
		memset(&t->malloc, 0, sizeof(t->malloc));
	}
}

/* Is the real malloc glibc's? (guard raised) Its chunks are checked on the program's
 * first blocks (usable_checked). */
static bool glibc_malloc(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	bool ok = libc && dlsym(libc, "malloc") == (void *)real.malloc &&
		  dlsym(libc, "malloc_usable_size") == (void *)real.usable;
	if (libc) {
		dlclose(libc);
	}
	return ok;
}

void isc_hooks_malloc_init(void)
{
	resolve();
	isc_hooks_mmap_resolve();
	isc_tls_guard++;
	atomic_store(&verify_left, VERIFY);
	glibc_candidate = glibc_malloc();
	isc_tls_guard--;
	isc_debug("malloc hooks: %s", glibc_candidate
					      ? "glibc chunk sizes read inline once checked"
					      : "sizes from the allocator's malloc_usable_size");
	hot.mean = isc_config.malloc_sample;
	hot.threshold = hot.mean ? isc_config.malloc_threshold : 0;
	hot.free_threshold = hot.threshold;
	hot.cap = hot.threshold > 0 ? (int64_t)(hot.threshold - 1) : -1;
	isc_host_map_threshold = hot.threshold;
	if (real.usable == no_usable) {
		isc_error("the allocator has no malloc_usable_size: live heap bytes are not "
			  "known (freed bytes count as 0)");
	}
	isc_host_malloc_on = isc_config.hook_malloc;
	hot.on = isc_config.hook_malloc;
	update_fast();
}
