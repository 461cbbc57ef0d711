/* SPDX-License-Identifier: MIT */
#include "analyzer/base/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t isc_grow_cap(size_t cap, size_t need, size_t first)
{
	size_t c = cap > 0 ? cap : (first > 0 ? first : 1);
	while (c < need) {
		if (c > SIZE_MAX / 2) {
			return SIZE_MAX;
		}
		c *= 2;
	}
	return c;
}

int isc_resize(void *arr, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		return -ENOMEM;
	}
	/* arr holds a T *: copied through its bytes, which every pointer type shares with
	 * void * on the platforms we build for, without an aliasing cast. */
	void *old;
	memcpy(&old, arr, sizeof(old));
	void *p = NULL;
	if (n * size == 0) {
		free(old);
	} else if ((p = realloc(old, n * size)) == NULL) {
		return -ENOMEM;
	}
	memcpy(arr, &p, sizeof(p));
	return 0;
}

int isc_grow_slow(void *arr, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap) {
		return 0;
	}
	size_t c = isc_grow_cap(*cap, need, first);
	if (c == SIZE_MAX || isc_resize(arr, c, size) < 0) {
		return -ENOMEM;
	}
	*cap = c;
	return 0;
}
