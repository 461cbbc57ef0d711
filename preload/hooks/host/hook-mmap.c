/* SPDX-License-Identifier: MIT */
/* The hooks define the libc names themselves: no header renaming open to open64
 * (meson builds with _FILE_OFFSET_BITS=64) and no fortified inline wrappers. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
/*
 * Mappings: mmap, mmap64, munmap, mremap.
 *
 * These run where nothing else may: inside the dynamic loader's and the
 * allocator's own paths, and inside this library's buffer setup. So they never call
 * dlsym or malloc. The real functions are resolved once in the family init (from
 * the constructor); before that, the raw system call does the work. Counters go to
 * the thread's malloc counters; mappings of at least INFERSCOPE_MALLOC_THRESHOLD
 * bytes are memory events.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/hooks/host/host.h"
#include "preload/core/export.h"

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);

static struct {
	mmap_fn mmap;
	munmap_fn munmap;
	mremap_fn mremap;
} real;

/* From the malloc family's init and from the library's constructor (lifecycle.c), which
 * calls it even when INFERSCOPE_ENABLE=0 keeps the families from starting: a pass-through must
 * still reach whatever mmap comes next (a sanitizer's, say), not the raw call. */
void isc_hooks_mmap_resolve(void)
{
	if (real.mmap) {
		return;
	}
	real.munmap = (munmap_fn)isc_host_next("munmap");
	real.mremap = (mremap_fn)isc_host_next("mremap");
	real.mmap = (mmap_fn)isc_host_next("mmap");
}

static inline struct isc_thread *map_thread(void)
{
	if (!isc_host_malloc_on || isc_tls_guard != 0) {
		return NULL;
	}
	struct isc_thread *t = isc_tls_self;
	return t ? t : isc_host_attach(false);
}

static void note_map(void *p, size_t len, unsigned op)
{
	struct isc_thread *t = map_thread();
	if (t == NULL || p == MAP_FAILED) {
		return;
	}
	t->malloc.mmaps++;
	t->malloc.mapped_bytes += len;
	if (len >= isc_host_map_threshold && isc_host_may_start_collector()) {
		isc_host_record_memory(t, op, p, len, len);
	}
}

ISC_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;
	if (real.mmap) {
		p = real.mmap(addr, len, prot, flags, fd, off);
	} else {
		/* syscall() returns -1 with errno set: MAP_FAILED, as mmap does */
		p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	}
	note_map(p, len, ISC_MEM_MMAP);
	return p;
}

/* Off_t is 64-bit on x86-64: mmap64 is the same function under another name. */
extern __typeof(mmap) mmap64 __attribute__((alias("mmap"), visibility("default")));

ISC_EXPORT int munmap(void *addr, size_t len)
{
	struct isc_thread *t = map_thread();
	if (t && len >= isc_host_map_threshold && isc_host_may_start_collector()) {
		isc_host_record_memory(t, ISC_MEM_MUNMAP, addr, len, len);
	}
	int r = real.munmap ? real.munmap(addr, len) : (int)syscall(SYS_munmap, addr, len);
	if (t && r == 0) {
		t->malloc.munmaps++;
		t->malloc.unmapped_bytes += len;
	}
	return r;
}

ISC_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	void *p;
	if (real.mremap) {
		p = real.mremap(old, old_len, new_len, flags, want);
	} else {
		p = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
	}
	struct isc_thread *t = map_thread();
	if (t && p != MAP_FAILED) {
		t->malloc.mremaps++;
		t->malloc.mapped_bytes += new_len;
		t->malloc.unmapped_bytes += old_len;
		if ((new_len >= isc_host_map_threshold || old_len >= isc_host_map_threshold) &&
		    isc_host_may_start_collector()) {
			isc_host_record_memory(t, ISC_MEM_MREMAP, p, new_len, new_len);
		}
	}
	return p;
}
