/* SPDX-License-Identifier: MIT */
/*
 * The allocator's observable state, as a program can see it: whether a 200 KB malloc
 * is served by mmap (its chunk's IS_MMAPPED bit), mallinfo2's fields and the heap top
 * (sbrk(0)) at main, after the 200 KB block, after it is freed, and after a loop of
 * 200 KB allocations and frees. Printed in one line at the end (printf allocates).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct state {
	struct mallinfo2 mi;
	long brk_delta;
};

static char *brk0;

static void take(struct state *s)
{
	s->mi = mallinfo2();
	s->brk_delta = (long)((char *)sbrk(0) - brk0);
}

static int put(char *out, size_t cap, const char *name, const struct state *s)
{
	return snprintf(out, cap,
			" %s: arena %zu ordblks %zu hblks %zu hblkhd %zu uordblks %zu "
			"fordblks %zu keepcost %zu brk %+ld",
			name, s->mi.arena, s->mi.ordblks, s->mi.hblks, s->mi.hblkhd, s->mi.uordblks,
			s->mi.fordblks, s->mi.keepcost, s->brk_delta);
}

/* glibc's chunk header, the size_t just before the block: its bit 1 is IS_MMAPPED. Read
 * through an address as a number: the compiler knows the block's bounds, not the
 * allocator's header before it. */
static int mmapped_chunk(const void *p)
{
	size_t head;
	memcpy(&head, (const void *)((uintptr_t)p - sizeof(size_t)), sizeof(head));
	return (head & 2) != 0;
}

int main(void)
{
	struct state st[4];
	brk0 = sbrk(0);
	take(&st[0]);
	char *p = malloc(200 * 1024);
	int mmapped = mmapped_chunk(p);
	memset(p, 1, 200 * 1024);
	take(&st[1]);
	free(p);
	take(&st[2]);
	unsigned from_mmap = 0;
	for (int i = 0; i < 100; i++) {
		char *q = malloc(200 * 1024);
		from_mmap += (unsigned)mmapped_chunk(q);
		q[0] = (char)i;
		free(q);
	}
	take(&st[3]);
	char line[2048];
	int n = snprintf(line, sizeof(line), "mmapped %d loop_mmapped %u;", mmapped, from_mmap);
	static const char *const names[] = { "main", "malloc", "free", "loop" };
	for (int i = 0; i < 4; i++) {
		n += put(line + n, sizeof(line) - (size_t)n, names[i], &st[i]);
	}
	printf("%s\n", line);
	return 0;
}
