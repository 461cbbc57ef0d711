/* SPDX-License-Identifier: MIT */
/* The hooks define the libc names themselves: no header renaming open to open64
 * (meson builds with _FILE_OFFSET_BITS=64) and no fortified inline wrappers. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
/*
 * Files and the driver: open/openat (with open64, openat64 and the
 * _FORTIFY_SOURCE entry points __open_2, __openat_2, ...), close, fsync, fdatasync,
 * ioctl.
 *
 * open and ioctl are variadic. open's mode is read only when the flags say one was
 * passed (O_CREAT, O_TMPFILE), exactly as libc does; ioctl's one optional argument
 * is forwarded as a pointer-sized value, which is how every ioctl passes it.
 * ioctl on a /dev/nvidia* descriptor counts under its own aggregate (ioctl_nvidia)
 * and its events are category `driver`: that is time spent in the GPU driver.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "preload/hooks/host/host.h"
#include "preload/core/export.h"

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static struct {
	__typeof(open) *open;
	__typeof(openat) *openat;
	__typeof(__open_2) *open_2;
	__typeof(__openat_2) *openat_2;
	__typeof(close) *close;
	__typeof(fsync) *fsync;
	__typeof(fdatasync) *fdatasync;
	int (*ioctl)(int, unsigned long, ...);
} real;

void isc_hooks_files_resolve(void)
{
	real.openat = isc_host_next("openat");
	real.open_2 = isc_host_next("__open_2");
	real.openat_2 = isc_host_next("__openat_2");
	real.close = isc_host_next("close");
	real.fsync = isc_host_next("fsync");
	real.fdatasync = isc_host_next("fdatasync");
	real.ioctl = isc_host_next("ioctl");
	real.open = isc_host_next("open");
}

#define REAL(f) (__builtin_expect(real.f != NULL, 1) ? real.f : (isc_hooks_files_resolve(), real.f))

static inline int opened(const struct isc_sys_call *c, const char *path, int r)
{
	isc_fd_opened(r, path);
	/* the event's fd is the new descriptor */
	isc_sys_end(c, r, 0, 0, r, isc_sys_err(r));
	return r;
}

static inline bool needs_mode(int flags)
{
	return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

/* The open family, one body: dirfd is used when at is true. */
static int do_open(unsigned sc, bool at, int dirfd, const char *path, int flags, mode_t mode,
		   bool chk)
{
	struct isc_sys_call c;
	bool measured = isc_sys_begin(&c, sc);
	int r;
	if (chk) {
		r = at ? REAL(openat_2)(dirfd, path, flags) : REAL(open_2)(path, flags);
	} else {
		r = at ? REAL(openat)(dirfd, path, flags, mode) : REAL(open)(path, flags, mode);
	}
	if (!measured) {
		isc_fd_opened(r, path);
		return r;
	}
	return opened(&c, path, r);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return needs_mode(flags) ? (mode_t)va_arg(ap, int) : 0;
}

ISC_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return do_open(ISC_SC_OPEN, false, 0, path, flags, mode, false);
}
extern __typeof(open) open64 __attribute__((alias("open"), visibility("default")));

ISC_EXPORT int __open_2(const char *path, int flags)
{
	return do_open(ISC_SC_OPEN, false, 0, path, flags, 0, true);
}
extern __typeof(__open_2) __open64_2 __attribute__((alias("__open_2"), visibility("default")));

ISC_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return do_open(ISC_SC_OPENAT, true, dirfd, path, flags, mode, false);
}
extern __typeof(openat) openat64 __attribute__((alias("openat"), visibility("default")));

ISC_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return do_open(ISC_SC_OPENAT, true, dirfd, path, flags, 0, true);
}
extern __typeof(__openat_2) __openat64_2
	__attribute__((alias("__openat_2"), visibility("default")));

/* A release: the number may be reused by another thread the moment it is closed. */
ISC_EXPORT int close(int fd)
{
	struct isc_sys_call c;
	isc_fd_closed(fd);
	if (!isc_sys_begin(&c, ISC_SC_CLOSE)) {
		return REAL(close)(fd);
	}
	int r = REAL(close)(fd);
	isc_sys_end(&c, fd, 0, 0, r, isc_sys_err(r));
	return r;
}

ISC_EXPORT int fsync(int fd)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_FSYNC)) {
		return REAL(fsync)(fd);
	}
	int r = REAL(fsync)(fd);
	isc_sys_end(&c, fd, 0, 0, r, isc_sys_err(r));
	return r;
}

ISC_EXPORT int fdatasync(int fd)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_FDATASYNC)) {
		return REAL(fdatasync)(fd);
	}
	int r = REAL(fdatasync)(fd);
	isc_sys_end(&c, fd, 0, 0, r, isc_sys_err(r));
	return r;
}

ISC_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_IOCTL)) {
		return REAL(ioctl)(fd, req, arg);
	}
	if (isc_fd_is_nvidia(fd)) {
		c.sc = ISC_SC_IOCTL_NVIDIA;
	}
	int r = REAL(ioctl)(fd, req, arg);
	isc_sys_end(&c, fd, 0, 0, r, isc_sys_err(r));
	return r;
}
