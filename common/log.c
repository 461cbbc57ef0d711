/* SPDX-License-Identifier: MIT */
#include "common/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"

static int log_level;
static _Atomic uint64_t window_start; /* second (monotonic) of the current burst window */
static _Atomic unsigned window_count;
static _Atomic unsigned suppressed;
/* The thread has a descriptor table of its own (isc_log_private_table). */
static __thread bool own_table;

void isc_log_private_table(void)
{
	own_table = true;
}

/* stderr as the program has it now: in a table of our own, a copy for this line only
 * (pidfd_getfd), never kept: a program that closes its stderr to end a pipe ends it.
 * Both descriptors are closed at once: a low RLIMIT_NOFILE leaves room for few. */
static void write_stderr(const char *buf, size_t n)
{
	int fd = 2;
	if (own_table) {
		long pidfd = syscall(SYS_pidfd_open, (long)syscall(SYS_getpid), 0L);
		fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, 2L, 0L);
		if (pidfd >= 0) {
			syscall(SYS_close, pidfd);
		}
		if (fd < 0) {
			return;
		}
	}
	ssize_t r = syscall(SYS_write, fd, buf, n);
	(void)r;
	if (own_table) {
		syscall(SYS_close, fd);
	}
}

void isc_log_set_level(int level)
{
	log_level = level;
}

int isc_log_level(void)
{
	return log_level;
}

struct out {
	char *buf;
	size_t cap;
	size_t len;
};

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && o->len + 1 < o->cap; i++) {
		o->buf[o->len++] = s[i];
	}
}

static void put_num(struct out *o, uint64_t v, unsigned base, bool neg)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v != 0);
	if (neg) {
		put(o, "-", 1);
	}
	while (n > 0) {
		put(o, &tmp[--n], 1);
	}
}

/* Reads one integer argument of the given length modifier (0: int, 1: long, 2: long long). */
static uint64_t arg_unsigned(va_list *ap, int lm)
{
	if (lm == 2) {
		return va_arg(*ap, unsigned long long);
	}
	if (lm == 1) {
		return va_arg(*ap, unsigned long);
	}
	return va_arg(*ap, unsigned int);
}

static int64_t arg_signed(va_list *ap, int lm)
{
	if (lm == 2) {
		return va_arg(*ap, long long);
	}
	if (lm == 1) {
		return va_arg(*ap, long);
	}
	return va_arg(*ap, int);
}

size_t isc_vfmt(char *buf, size_t cap, const char *fmt, va_list ap0)
{
	struct out o = { buf, cap, 0 };
	va_list ap;

	va_copy(ap, ap0);
	for (const char *p = fmt; *p != '\0'; p++) {
		if (*p != '%') {
			put(&o, p, 1);
			continue;
		}
		p++;
		int lm = 0;
		while (*p == 'l' || *p == 'z') {
			lm++; /* z is long on LP64 */
			p++;
		}
		switch (*p) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			s = s ? s : "(null)";
			put(&o, s, strlen(s));
			break;
		}
		case 'd':
		case 'i': {
			int64_t v = arg_signed(&ap, lm);
			put_num(&o, v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v, 10, v < 0);
			break;
		}
		case 'u':
			put_num(&o, arg_unsigned(&ap, lm), 10, false);
			break;
		case 'x':
			put_num(&o, arg_unsigned(&ap, lm), 16, false);
			break;
		case 'p':
			put(&o, "0x", 2);
			put_num(&o, (uintptr_t)va_arg(ap, void *), 16, false);
			break;
		case 'c': {
			char c = (char)va_arg(ap, int);
			put(&o, &c, 1);
			break;
		}
		case '%':
			put(&o, "%", 1);
			break;
		case '\0':
			p--;
			break;
		default:
			put(&o, p - 1, 2);
		}
	}
	va_end(ap);
	if (cap > 0) {
		buf[o.len] = '\0';
	}
	return o.len;
}

size_t isc_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = isc_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

/* True when this line may be written; counts what the burst limit held back. */
static bool rate_ok(void)
{
	uint64_t sec = isc_now() / 1000000000u;
	uint64_t w = atomic_load_explicit(&window_start, memory_order_relaxed);
	if (sec != w && atomic_compare_exchange_strong(&window_start, &w, sec)) {
		atomic_store(&window_count, 0);
	}
	if (atomic_fetch_add(&window_count, 1) < ISC_LOG_BURST) {
		return true;
	}
	atomic_fetch_add(&suppressed, 1);
	return false;
}

void isc_log(int level, const char *fmt, ...)
{
	if (level > log_level) {
		return;
	}
	int saved = errno;
	if (rate_ok()) {
		char buf[512];
		/* getpid through the syscall: the cached value is wrong in a vfork child */
		size_t n =
			isc_fmt(buf, sizeof(buf), "inferscope[%ld]: ", (long)syscall(SYS_getpid));
		unsigned held = atomic_exchange(&suppressed, 0);
		if (held > 0) {
			n += isc_fmt(buf + n, sizeof(buf) - n, "(%u messages suppressed) ", held);
		}
		va_list ap;
		va_start(ap, fmt);
		n += isc_vfmt(buf + n, sizeof(buf) - n - 1, fmt, ap);
		va_end(ap);
		buf[n++] = '\n';
		write_stderr(buf, n);
	}
	errno = saved;
}
