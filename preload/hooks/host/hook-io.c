/* SPDX-License-Identifier: MIT */
/* The hooks define the libc names themselves: no header renaming open to open64
 * (meson builds with _FILE_OFFSET_BITS=64) and no fortified inline wrappers. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
/*
 * I/O and network calls: read/write, pread/pwrite, the vector forms, recv and send calls,
 * accept/connect, with their 64-bit names (pread64, preadv64, ...) and the
 * _FORTIFY_SOURCE entry points (__read_chk, __recv_chk, ...), which forward to the
 * real checked function so that the check still happens.
 *
 * A vector call's requested bytes are summed only after the call succeeded: an
 * invalid iovec must fail with EFAULT in the kernel, not crash in our hook.
 */
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/hooks/host/host.h"
#include "preload/core/export.h"

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, __SOCKADDR_ARG addr,
		       socklen_t *addrlen);

static struct {
	__typeof(read) *read;
	__typeof(write) *write;
	__typeof(pread) *pread;
	__typeof(pwrite) *pwrite;
	__typeof(readv) *readv;
	__typeof(writev) *writev;
	__typeof(preadv) *preadv;
	__typeof(pwritev) *pwritev;
	__typeof(preadv2) *preadv2;
	__typeof(pwritev2) *pwritev2;
	__typeof(__read_chk) *read_chk;
	__typeof(__pread_chk) *pread_chk;
	__typeof(recv) *recv;
	__typeof(recvfrom) *recvfrom;
	__typeof(recvmsg) *recvmsg;
	__typeof(recvmmsg) *recvmmsg;
	__typeof(send) *send;
	__typeof(sendto) *sendto;
	__typeof(sendmsg) *sendmsg;
	__typeof(sendmmsg) *sendmmsg;
	__typeof(accept) *accept;
	__typeof(accept4) *accept4;
	__typeof(connect) *connect;
	__typeof(__recv_chk) *recv_chk;
	__typeof(__recvfrom_chk) *recvfrom_chk;
} real;

void isc_hooks_io_resolve(void)
{
	real.write = isc_host_next("write");
	real.pread = isc_host_next("pread");
	real.pwrite = isc_host_next("pwrite");
	real.readv = isc_host_next("readv");
	real.writev = isc_host_next("writev");
	real.preadv = isc_host_next("preadv");
	real.pwritev = isc_host_next("pwritev");
	real.preadv2 = isc_host_next("preadv2");
	real.pwritev2 = isc_host_next("pwritev2");
	real.read_chk = isc_host_next("__read_chk");
	real.pread_chk = isc_host_next("__pread_chk");
	real.recv = isc_host_next("recv");
	real.recvfrom = isc_host_next("recvfrom");
	real.recvmsg = isc_host_next("recvmsg");
	real.recvmmsg = isc_host_next("recvmmsg");
	real.send = isc_host_next("send");
	real.sendto = isc_host_next("sendto");
	real.sendmsg = isc_host_next("sendmsg");
	real.sendmmsg = isc_host_next("sendmmsg");
	real.accept = isc_host_next("accept");
	real.accept4 = isc_host_next("accept4");
	real.connect = isc_host_next("connect");
	real.recv_chk = isc_host_next("__recv_chk");
	real.recvfrom_chk = isc_host_next("__recvfrom_chk");
	real.read = isc_host_next("read");
}

/* A hook that runs before the constructor resolves everything on first use. */
#define REAL(f) (__builtin_expect(real.f != NULL, 1) ? real.f : (isc_hooks_io_resolve(), real.f))

static uint64_t iov_bytes(const struct iovec *iov, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++) {
		s += iov[i].iov_len;
	}
	return s;
}

/* Ends a call that returns a byte count or -1. */
static inline ssize_t io_done(const struct isc_sys_call *c, int fd, uint64_t bytes, ssize_t r)
{
	isc_sys_end(c, fd, bytes, r > 0 ? (uint64_t)r : 0, r, isc_sys_err(r));
	return r;
}

static inline ssize_t iov_done(const struct isc_sys_call *c, int fd, const struct iovec *iov, int n,
			       ssize_t r)
{
	return io_done(c, fd, r >= 0 ? iov_bytes(iov, n) : 0, r);
}

/* ---- read / write ---- */

ISC_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_READ)) {
		return REAL(read)(fd, buf, n);
	}
	return io_done(&c, fd, n, REAL(read)(fd, buf, n));
}

ISC_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_READ)) {
		return REAL(read_chk)(fd, buf, n, buflen);
	}
	return io_done(&c, fd, n, REAL(read_chk)(fd, buf, n, buflen));
}

ISC_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_WRITE)) {
		return REAL(write)(fd, buf, n);
	}
	return io_done(&c, fd, n, REAL(write)(fd, buf, n));
}

/* off_t is 64-bit on x86-64: the *64 names are the same functions. */
ISC_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PREAD)) {
		return REAL(pread)(fd, buf, n, off);
	}
	return io_done(&c, fd, n, REAL(pread)(fd, buf, n, off));
}
extern __typeof(pread) pread64 __attribute__((alias("pread"), visibility("default")));

ISC_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PREAD)) {
		return REAL(pread_chk)(fd, buf, n, off, buflen);
	}
	return io_done(&c, fd, n, REAL(pread_chk)(fd, buf, n, off, buflen));
}
extern __typeof(__pread_chk) __pread64_chk
	__attribute__((alias("__pread_chk"), visibility("default")));

ISC_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PWRITE)) {
		return REAL(pwrite)(fd, buf, n, off);
	}
	return io_done(&c, fd, n, REAL(pwrite)(fd, buf, n, off));
}
extern __typeof(pwrite) pwrite64 __attribute__((alias("pwrite"), visibility("default")));

ISC_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_READV)) {
		return REAL(readv)(fd, iov, n);
	}
	return iov_done(&c, fd, iov, n, REAL(readv)(fd, iov, n));
}

ISC_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_WRITEV)) {
		return REAL(writev)(fd, iov, n);
	}
	return iov_done(&c, fd, iov, n, REAL(writev)(fd, iov, n));
}

ISC_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PREADV)) {
		return REAL(preadv)(fd, iov, n, off);
	}
	return iov_done(&c, fd, iov, n, REAL(preadv)(fd, iov, n, off));
}
extern __typeof(preadv) preadv64 __attribute__((alias("preadv"), visibility("default")));

ISC_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PWRITEV)) {
		return REAL(pwritev)(fd, iov, n, off);
	}
	return iov_done(&c, fd, iov, n, REAL(pwritev)(fd, iov, n, off));
}
extern __typeof(pwritev) pwritev64 __attribute__((alias("pwritev"), visibility("default")));

ISC_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PREADV2)) {
		return REAL(preadv2)(fd, iov, n, off, flags);
	}
	return iov_done(&c, fd, iov, n, REAL(preadv2)(fd, iov, n, off, flags));
}
extern __typeof(preadv2) preadv64v2 __attribute__((alias("preadv2"), visibility("default")));

ISC_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_PWRITEV2)) {
		return REAL(pwritev2)(fd, iov, n, off, flags);
	}
	return iov_done(&c, fd, iov, n, REAL(pwritev2)(fd, iov, n, off, flags));
}
extern __typeof(pwritev2) pwritev64v2 __attribute__((alias("pwritev2"), visibility("default")));

/* ---- sockets ---- */

ISC_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_RECV)) {
		return REAL(recv)(fd, buf, n, flags);
	}
	return io_done(&c, fd, n, REAL(recv)(fd, buf, n, flags));
}

ISC_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_RECV)) {
		return REAL(recv_chk)(fd, buf, n, buflen, flags);
	}
	return io_done(&c, fd, n, REAL(recv_chk)(fd, buf, n, buflen, flags));
}

ISC_EXPORT ssize_t recvfrom(int fd, void *restrict buf, size_t n, int flags, __SOCKADDR_ARG addr,
			    socklen_t *restrict len)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_RECVFROM)) {
		return REAL(recvfrom)(fd, buf, n, flags, addr, len);
	}
	return io_done(&c, fd, n, REAL(recvfrom)(fd, buf, n, flags, addr, len));
}

ISC_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
				  __SOCKADDR_ARG addr, socklen_t *len)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_RECVFROM)) {
		return REAL(recvfrom_chk)(fd, buf, n, buflen, flags, addr, len);
	}
	return io_done(&c, fd, n, REAL(recvfrom_chk)(fd, buf, n, buflen, flags, addr, len));
}

ISC_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_RECVMSG)) {
		return REAL(recvmsg)(fd, msg, flags);
	}
	ssize_t r = REAL(recvmsg)(fd, msg, flags);
	return iov_done(&c, fd, r >= 0 ? msg->msg_iov : NULL, r >= 0 ? (int)msg->msg_iovlen : 0, r);
}

/* Bytes moved by a multi-message call: the kernel set msg_len of the first r. */
static uint64_t mmsg_bytes(const struct mmsghdr *v, int r)
{
	uint64_t s = 0;
	for (int i = 0; i < r; i++) {
		s += v[i].msg_len;
	}
	return s;
}

ISC_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
			struct timespec *timeout)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_RECVMMSG)) {
		return REAL(recvmmsg)(fd, v, n, flags, timeout);
	}
	int r = REAL(recvmmsg)(fd, v, n, flags, timeout);
	isc_sys_end(&c, fd, 0, r > 0 ? mmsg_bytes(v, r) : 0, r, isc_sys_err(r));
	return r;
}

ISC_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_SEND)) {
		return REAL(send)(fd, buf, n, flags);
	}
	return io_done(&c, fd, n, REAL(send)(fd, buf, n, flags));
}

ISC_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, __CONST_SOCKADDR_ARG addr,
			  socklen_t len)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_SENDTO)) {
		return REAL(sendto)(fd, buf, n, flags, addr, len);
	}
	return io_done(&c, fd, n, REAL(sendto)(fd, buf, n, flags, addr, len));
}

ISC_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_SENDMSG)) {
		return REAL(sendmsg)(fd, msg, flags);
	}
	ssize_t r = REAL(sendmsg)(fd, msg, flags);
	return iov_done(&c, fd, r >= 0 ? msg->msg_iov : NULL, r >= 0 ? (int)msg->msg_iovlen : 0, r);
}

ISC_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_SENDMMSG)) {
		return REAL(sendmmsg)(fd, v, n, flags);
	}
	int r = REAL(sendmmsg)(fd, v, n, flags);
	isc_sys_end(&c, fd, 0, r > 0 ? mmsg_bytes(v, r) : 0, r, isc_sys_err(r));
	return r;
}

ISC_EXPORT int accept(int fd, __SOCKADDR_ARG addr, socklen_t *restrict len)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_ACCEPT)) {
		return REAL(accept)(fd, addr, len);
	}
	int r = REAL(accept)(fd, addr, len);
	isc_fd_closed(r); /* a new descriptor: forget what its number was before */
	isc_sys_end(&c, fd, 0, 0, r, isc_sys_err(r));
	return r;
}

ISC_EXPORT int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *restrict len, int flags)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_ACCEPT4)) {
		return REAL(accept4)(fd, addr, len, flags);
	}
	int r = REAL(accept4)(fd, addr, len, flags);
	isc_fd_closed(r);
	isc_sys_end(&c, fd, 0, 0, r, isc_sys_err(r));
	return r;
}

ISC_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	struct isc_sys_call c;
	if (!isc_sys_begin(&c, ISC_SC_CONNECT)) {
		return REAL(connect)(fd, addr, len);
	}
	return (int)io_done(&c, fd, 0, REAL(connect)(fd, addr, len));
}
