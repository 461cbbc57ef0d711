/* SPDX-License-Identifier: MIT */
#include "format/scratch.h"

#include <string.h>
#include <sys/mman.h>

void *isc_map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void isc_unmap(void *p, size_t n)
{
	if (p != NULL && n > 0) {
		munmap(p, n);
	}
}

void isc_vec_init(struct isc_vec *v, size_t elem)
{
	memset(v, 0, sizeof(*v));
	v->elem = elem;
}

bool isc_vec_reserve(struct isc_vec *v, size_t n)
{
	if (n <= v->cap) {
		return true;
	}
	size_t cap = v->cap ? v->cap : 4096 / v->elem + 1;
	while (cap < n) {
		cap *= 2;
	}
	size_t bytes = (cap * v->elem + 4095) & ~(size_t)4095;
	void *p;
	if (v->data == NULL) {
		p = isc_map(bytes);
	} else {
		p = mremap(v->data, v->mapped, bytes, MREMAP_MAYMOVE);
		p = (p == MAP_FAILED) ? NULL : p;
	}
	if (p == NULL) {
		return false;
	}
	v->data = p;
	v->mapped = bytes;
	v->cap = bytes / v->elem;
	return true;
}

void *isc_vec_push(struct isc_vec *v)
{
	if (!isc_vec_reserve(v, v->len + 1)) {
		return NULL;
	}
	/* fresh pages from mmap/mremap are zero, and elements are never popped */
	return (char *)v->data + v->elem * v->len++;
}

void isc_vec_finish(struct isc_vec *v)
{
	isc_unmap(v->data, v->mapped);
	memset(v, 0, sizeof(*v));
}
