/* SPDX-License-Identifier: MIT */
#include "preload/core/arena.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HDR 16u
#define MIN_BLOCK 32u
#define CLASSES 40
#define LARGE (64u * 1024u)	  /* blocks this large give their pages back when freed */
#define COMMIT_STEP (1u << 20)	  /* address space made usable at a time */
#define MAGIC_BLOCK 0x1c5a7e4au	  /* a block's own header */
#define MAGIC_ALIGNED 0x1c5a7e4bu /* before an aligned pointer: the offset back */

struct hdr {
	uint32_t magic;
	uint32_t cls;  /* block size MIN_BLOCK << cls */
	uint64_t back; /* MAGIC_ALIGNED: bytes back to the block's header */
};

_Static_assert(sizeof(struct hdr) == HDR, "header");

uintptr_t isc_arena_lo, isc_arena_span;
static uintptr_t arena_hi;

static _Atomic int lock;
static _Atomic int state; /* 0 not tried, 1 reserving, 2 ready, 3 none to be had */
static uintptr_t top, committed;
static void *free_list[CLASSES];

static void take(void)
{
	while (atomic_exchange_explicit(&lock, 1, memory_order_acquire)) {
		sched_yield();
	}
}

static void give(void)
{
	atomic_store_explicit(&lock, 0, memory_order_release);
}

/* Raw system calls: the mapping hooks must not see the library's own memory. */
static void *map(size_t n, int prot, int flags)
{
	long r = syscall(SYS_mmap, NULL, n, prot, flags, -1, 0);
	return r < 0 && r > -4096 ? NULL : (void *)r;
}

static bool reserve(void)
{
	int s = 0;
	if (atomic_compare_exchange_strong(&state, &s, 1)) {
		/* address space only: PROT_NONE costs no memory and no commit charge; smaller
		 * where an address-space limit refuses the first */
		static const uint64_t sizes[] = { 64ull << 30, 8ull << 30, 1ull << 30,
						  256ull << 20 };
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			void *p = map(sizes[i], PROT_NONE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
			if (p != NULL) {
				top = committed = (uintptr_t)p;
				arena_hi = (uintptr_t)p + sizes[i];
				/* lo before span: a reader that sees the span sees where it starts */
				__atomic_store_n(&isc_arena_lo, (uintptr_t)p, __ATOMIC_RELEASE);
				__atomic_store_n(&isc_arena_span, sizes[i], __ATOMIC_RELEASE);
				atomic_store(&state, 2);
				return true;
			}
		}
		atomic_store(&state, 3);
		return false;
	}
	while (atomic_load(&state) == 1) {
		sched_yield();
	}
	return atomic_load(&state) == 2;
}

static unsigned class_of(size_t bytes)
{
	unsigned c = 0;
	while (c < CLASSES && ((size_t)MIN_BLOCK << c) < bytes) {
		c++;
	}
	return c;
}

/* A block of class c from its free list or the untouched end (lock held). */
static struct hdr *block(unsigned c)
{
	size_t size = (size_t)MIN_BLOCK << c;
	struct hdr *h = free_list[c];
	if (h != NULL) {
		memcpy(&free_list[c], (char *)h + HDR, sizeof(void *));
		return h;
	}
	uintptr_t start = size >= LARGE ? (top + 4095) & ~(uintptr_t)4095 : top;
	if (start + size > arena_hi || start + size < start) {
		return NULL;
	}
	if (start + size > committed) {
		uintptr_t want = (start + size + COMMIT_STEP - 1) & ~(uintptr_t)(COMMIT_STEP - 1);
		want = want > arena_hi ? arena_hi : want;
		if (syscall(SYS_mprotect, committed, want - committed, PROT_READ | PROT_WRITE) !=
		    0) {
			return NULL;
		}
		committed = want;
	}
	top = start + size;
	h = (struct hdr *)start;
	h->cls = c;
	return h;
}

void *isc_arena_alloc(size_t n, size_t align)
{
	if (!reserve()) {
		return NULL;
	}
	align = align < HDR ? HDR : align;
	size_t extra = align > HDR ? align : 0;
	if (n > isc_arena_span || align > (1u << 30)) {
		errno = ENOMEM;
		return NULL;
	}
	unsigned c = class_of(n + HDR + extra);
	if (c >= CLASSES) {
		errno = ENOMEM;
		return NULL;
	}
	take();
	struct hdr *h = block(c);
	give();
	if (h == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	h->magic = MAGIC_BLOCK;
	h->back = 0;
	uintptr_t p = (uintptr_t)h + HDR;
	if (extra) {
		uintptr_t a = (p + HDR + align - 1) & ~(uintptr_t)(align - 1);
		struct hdr *f = (struct hdr *)(a - HDR);
		f->magic = MAGIC_ALIGNED;
		f->cls = c;
		f->back = a - HDR - (uintptr_t)h;
		p = a;
	}
	return (void *)p;
}

static struct hdr *header_of(const void *p)
{
	struct hdr *h = (struct hdr *)((uintptr_t)p - HDR);
	if (h->magic == MAGIC_ALIGNED) {
		h = (struct hdr *)((uintptr_t)h - h->back);
	}
	return h;
}

size_t isc_arena_usable(const void *p)
{
	struct hdr *h = header_of(p);
	return ((size_t)MIN_BLOCK << h->cls) - ((uintptr_t)p - (uintptr_t)h);
}

void isc_arena_free(void *p)
{
	struct hdr *h = header_of(p);
	unsigned c = h->cls;
	size_t size = (size_t)MIN_BLOCK << c;
	if (h->magic != MAGIC_BLOCK || c >= CLASSES) {
		return; /* not a block of ours (a double free): leave it */
	}
	h->magic = 0;
	if (size >= LARGE) {
		/* its pages back to the kernel; the first keeps the header and the link */
		syscall(SYS_madvise, (uintptr_t)h + 4096, size - 4096, MADV_DONTNEED);
	}
	take();
	memcpy((char *)h + HDR, &free_list[c], sizeof(void *));
	free_list[c] = h;
	give();
}

void isc_arena_fork_child(void)
{
	atomic_store(&lock, 0);
}
