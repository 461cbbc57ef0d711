/* SPDX-License-Identifier: MIT */
/*
 * What each part of a host hook costs, one part at a time, in the shape the hooks use
 * (hooks/host/hook-malloc.c, host.h): ns per operation, best of 9 rounds run round-robin,
 * the empty loop's cost taken off. Run without the preload: the parts on their own.
 *
 *   pair_direct      malloc+free through the PLT: the allocator alone
 *   pair_through     the same through a wrapper that calls dlsym(RTLD_NEXT)'s pointers,
 *                    as an interposed hook does; call_through: the difference
 *   tls              the thread pointer and the guard (initial-exec TLS), one load each
 *   counters         the exact counters of one malloc and one free (plain stores)
 *   usable           a block's usable size from glibc's chunk header
 *   countdown_draw   the next sampling gap (an expiry, once per mean bytes)
 *   rdtsc, clock_mono, clock_thread_cpu, sigprocmask
 *                    the clocks of the system-call hooks, the catch-up's CPU clock and
 *                    its mask check
 *   histogram        a latency bucket and its increment (isc_sys_bucket)
 *   record           one 64-byte record reserved, filled and committed (buffer.h)
 *
 * Usage: bench-hook-parts [OPS]
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "preload/core/buffer.h"
#include "preload/hooks/host/host.h"
#include "preload/hooks/host/sampling.h"

#define ROUNDS 9
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);

static __attribute__((noinline)) void *hook_malloc(size_t n)
{
	return next_malloc(n);
}

static __attribute__((noinline)) void hook_free(void *p)
{
	next_free(p);
}

static __thread struct isc_thread *tls_self __attribute__((tls_model("initial-exec")));
static __thread unsigned tls_guard __attribute__((tls_model("initial-exec")));
static struct isc_malloc_counters counters;
static uint64_t alloc_bytes;
static uint64_t hist[ISC_SYSCALL_HIST];

enum part {
	EMPTY,
	PAIR_DIRECT,
	PAIR_THROUGH,
	TLS,
	COUNTERS,
	USABLE,
	DRAW,
	RDTSC,
	CLOCK_MONO,
	CLOCK_THREAD,
	SIGMASK,
	HISTOGRAM,
	RECORD,
	PARTS
};

static const char *const names[PARTS] = {
	"empty",       "pair_direct",	 "pair_through", "tls",	       "counters",
	"usable",      "countdown_draw", "rdtsc",	 "clock_mono", "clock_thread_cpu",
	"sigprocmask", "histogram",	 "record",
};

static __attribute__((noinline)) void run(enum part p, long ops, void *block, uint64_t *rng)
{
	struct timespec ts;
	sigset_t cur;
	for (long i = 0; i < ops; i++) {
		switch (p) {
		case EMPTY:
			KEEP(i);
			break;
		case PAIR_DIRECT: {
			void *b = malloc(64);
			KEEP(b);
			free(b);
			break;
		}
		case PAIR_THROUGH: {
			void *b = hook_malloc(64);
			KEEP(b);
			hook_free(b);
			break;
		}
		case TLS: {
			struct isc_thread *t = tls_self;
			unsigned g = tls_guard;
			KEEP(t);
			KEEP(g);
			break;
		}
		case COUNTERS: {
			struct isc_malloc_counters *m = &counters;
			size_t n = 64 + (size_t)(i & 7);
			KEEP(m);
			m->calls++;
			m->live += (int64_t)n;
			m->peak = m->live > m->peak ? m->live : m->peak;
			alloc_bytes += n;
			m->countdown -= (int64_t)n;
			m->frees++;
			m->bytes_freed += n;
			m->live -= (int64_t)n;
			break;
		}
		case USABLE: {
			size_t head;
			KEEP(block);
			memcpy(&head, (const char *)block - sizeof(size_t), sizeof(head));
			size_t u = (head & ~(size_t)7) - (head & 2 ? 16 : 8);
			KEEP(u);
			break;
		}
		case DRAW:
			KEEP(isc_sample_gap(rng, 512 * 1024));
			break;
		case RDTSC:
			KEEP(__rdtsc());
			break;
		case CLOCK_MONO:
			clock_gettime(CLOCK_MONOTONIC, &ts);
			KEEP(ts.tv_nsec);
			break;
		case CLOCK_THREAD:
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
			KEEP(ts.tv_nsec);
			break;
		case SIGMASK:
			KEEP(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, sizeof(long)));
			break;
		case HISTOGRAM: {
			uint64_t d = 100 + (uint64_t)(i & 1023);
			KEEP(d);
			hist[isc_sys_bucket(d)]++;
			break;
		}
		case RECORD: {
			struct isc_event *e = isc_event_reserve(ISC_EV_MEMORY, 1);
			if (e) {
				e->ts = (uint64_t)i;
				e->dur = 0;
				e->kind = ISC_EV_MEMORY;
				e->tid = 1;
				e->u.memory.bytes = 64;
				isc_event_commit(1);
			}
			if ((i & 0xffff) == 0) { /* recycle chunks: the cap never drops */
				for (struct isc_chunk *c = isc_full_take(); c;) {
					struct isc_chunk *next = c->next_full;
					isc_chunk_release(c);
					c = next;
				}
			}
			break;
		}
		case PARTS:
			break;
		}
	}
}

static double per_op_ns(enum part p, long ops, void *block, uint64_t *rng)
{
	double t0 = now_ns();
	run(p, ops, block, rng);
	return (now_ns() - t0) / (double)ops;
}

int main(int argc, char **argv)
{
	long ops = argc > 1 ? atol(argv[1]) : 2000000;
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	if (ops <= 0 || next_malloc == NULL || next_free == NULL) {
		fprintf(stderr, "usage: bench-hook-parts [OPS] (and no preload)\n");
		return 2;
	}
	isc_buffer_init(64ull << 20);
	uint64_t rng = isc_rand_seed(1, 2);
	void *block = malloc(64);
	tls_self = isc_thread_self();
	/* round-robin over the parts, best of the rounds: a neighbour's burst then costs one
	 * round of every part, not one part its figure */
	double best[PARTS];
	for (int p = 0; p < PARTS; p++) {
		best[p] = 1e30;
	}
	for (int r = 0; r < ROUNDS; r++) {
		for (int p = 0; p < PARTS; p++) {
			/* system calls are slower by two orders: fewer of them */
			long n = p == CLOCK_THREAD || p == SIGMASK ? ops / 20 : ops;
			double ns = per_op_ns((enum part)p, n, block, &rng);
			best[p] = ns < best[p] ? ns : best[p];
		}
	}
	for (int p = PAIR_DIRECT; p < PARTS; p++) {
		printf("%-17s %8.2f ns\n", names[p], best[p] - best[EMPTY]);
	}
	printf("%-17s %8.2f ns\n", "call_through", best[PAIR_THROUGH] - best[PAIR_DIRECT]);
	free(block);
	return 0;
}
