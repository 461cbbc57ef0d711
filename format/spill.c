/* SPDX-License-Identifier: MIT */
#include "format/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/json-writer.h"

#include "format/record.h"

/* A spill file's descriptor is open only while a sync writes (isc_spill_release()
 * closes it after the collector's tick), so the program never sees it in steady
 * state. While open it lives above the low numbers that programs and shell scripts
 * use by number (dup2 onto 3..9, fd 3 handed to a child), but inside the 64 slots a
 * process starts with: a higher one makes the kernel grow the descriptor table, which
 * in a multi-threaded process waits for an RCU grace period (~15 ms here). A program
 * that still closes or reuses it meanwhile is caught by check_fd(). */
#define ISC_FD_FLOOR 32

static int move_high(int fd)
{
	int h = fcntl(fd, F_DUPFD_CLOEXEC, ISC_FD_FLOOR);
	if (h < 0) {
		return fd;
	}
	close(fd);
	return h;
}

/* "/proc/thread-self/fd/<fd>": how an in-memory spill is reopened for reading (by the
 * thread that made it: its table may be its own). */
static void isc_fmt_proc_fd(char *out, size_t cap, int fd)
{
	static const char prefix[] = "/proc/thread-self/fd/";
	char num[24];
	size_t n = isc_fmt_uint(num, (uint64_t)fd);
	if (cap < sizeof(prefix) + n) {
		out[0] = '\0';
		return;
	}
	memcpy(out, prefix, sizeof(prefix) - 1);
	memcpy(out + sizeof(prefix) - 1, num, n);
	out[sizeof(prefix) - 1 + n] = '\0';
}

static int remember(struct isc_spill *s)
{
	struct stat st;
	if (fstat(s->fd, &st) != 0) {
		return -errno;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return 0;
}

static int write_header(struct isc_spill *s, uint64_t pid, uint64_t start_ns);
static int check_fd(struct isc_spill *s);

int isc_spill_create(struct isc_spill *s, const char *path, uint64_t pid, uint64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	size_t n = strlen(path);
	if (n >= sizeof(s->path)) {
		return -ENAMETOOLONG;
	}
	memcpy(s->path, path, n + 1);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* A leftover of an earlier process with our pid (pids wrap): it cannot be
		 * ours, since we create the spill once. Replace it. */
		if (unlink(path) == 0) {
			fd = open(path,
				  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND,
				  0600);
		}
	}
	if (fd < 0) {
		return -errno;
	}
	s->fd = move_high(fd);
	s->fd_tid = gettid();
	s->transient = true;
	int r = remember(s);
	if (r < 0) {
		isc_spill_close(s);
		return r;
	}
	return write_header(s, pid, start_ns);
}

int isc_spill_rename(struct isc_spill *s, const char *path)
{
	size_t n = strlen(path);
	if (!s->transient || n >= sizeof(s->path)) {
		return s->transient ? -ENAMETOOLONG : -EINVAL;
	}
	if (rename(s->path, path) != 0) {
		return -errno;
	}
	memcpy(s->path, path, n + 1);
	return 0;
}

int isc_spill_append(struct isc_spill *s, const char *path, uint64_t pid)
{
	struct isc_spill_header h;
	struct stat st;
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	size_t n = strlen(path);
	if (n >= sizeof(s->path)) {
		return -ENAMETOOLONG;
	}
	memcpy(s->path, path, n + 1);
	int fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	int r = 0;
	if (fstat(fd, &st) != 0) {
		r = -errno;
	} else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		   (size_t)st.st_size < sizeof(h) || pread(fd, &h, sizeof(h), 0) != sizeof(h) ||
		   !isc_spill_detect(h.magic, 8) || h.version != ISC_SPILL_VERSION ||
		   h.record_size != sizeof(struct isc_event) || h.pid != pid) {
		r = -EINVAL; /* not the spill our earlier image left for us */
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	s->fd = move_high(fd);
	s->fd_tid = gettid();
	s->transient = true;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->size = (uint64_t)st.st_size;
	return 0;
}

int isc_spill_truncate(struct isc_spill *s, uint64_t size)
{
	if (!s->transient || size > s->size) {
		return -EINVAL;
	}
	int r = check_fd(s);
	if (r == 0 && ftruncate(s->fd, (off_t)size) != 0) {
		r = -errno;
	}
	if (r == 0) {
		s->size = size;
	}
	isc_spill_release(s);
	return r;
}

int isc_spill_create_memfd(struct isc_spill *s, uint64_t pid, uint64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	int fd = memfd_create("inferscope-spill", MFD_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	s->fd = move_high(fd);
	s->fd_tid = gettid();
	isc_fmt_proc_fd(s->path, sizeof(s->path), s->fd);
	int r = remember(s);
	if (r < 0) {
		isc_spill_close(s);
		return r;
	}
	return write_header(s, pid, start_ns);
}

static int write_header(struct isc_spill *s, uint64_t pid, uint64_t start_ns)
{
	struct isc_spill_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, ISC_SPILL_MAGIC, 8);
	h.version = ISC_SPILL_VERSION;
	h.record_size = sizeof(struct isc_event);
	h.pid = pid;
	h.start_ns = start_ns;
	s->iov[0].iov_base = &h;
	s->iov[0].iov_len = sizeof(h);
	s->niov = 1;
	return isc_spill_sync(s);
}

static void push_iov(struct isc_spill *s, const void *p, size_t n)
{
	if (n > 0) {
		s->iov[s->niov].iov_base = (void *)p;
		s->iov[s->niov].iov_len = n;
		s->niov++;
	}
}

int isc_spill_queue(struct isc_spill *s, uint32_t type, const void *a, size_t an, const void *b,
		    size_t bn)
{
	if (s->err) {
		return s->err;
	}
	if (s->niov + 4 > ISC_SPILL_IOV || s->nhdr == ISC_SPILL_IOV / 3) {
		int r = isc_spill_sync(s);
		if (r < 0) {
			return r;
		}
	}
	struct isc_spill_block *h = &s->hdr[s->nhdr++];
	h->type = type;
	h->flags = 0;
	h->size = an + bn;
	s->queued += sizeof(*h) + an + bn + (8 - (an + bn) % 8) % 8;
	if (type == ISC_BLK_EVENTS) {
		s->queued_records += bn / sizeof(struct isc_event);
	}
	push_iov(s, h, sizeof(*h));
	push_iov(s, a, an);
	push_iov(s, b, bn);
	push_iov(s, &s->pad_zero, (8 - (an + bn) % 8) % 8);
	return 0;
}

/* Still the file we created? A program may have closed our descriptor (closefrom,
 * close_range) and opened something else under the same number. */
static int check_fd(struct isc_spill *s)
{
	struct stat st;
	if (s->transient && s->fd >= 0 && s->fd_tid != gettid()) {
		s->fd = -1; /* a number in another thread's table (the collector's own) */
	}
	if (s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino) {
		return 0;
	}
	if (!s->transient) {
		return -EBADF; /* an in-memory spill cannot be reopened: its only name was the fd */
	}
	int fd = open(s->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		return -errno;
	}
	s->fd = move_high(fd);
	s->fd_tid = gettid();
	if (fstat(s->fd, &st) != 0 || st.st_dev != s->dev || st.st_ino != s->ino) {
		/* someone replaced the file: refuse to append to a stranger's */
		close(s->fd);
		s->fd = -1;
		return -ESTALE;
	}
	return 0;
}

int isc_spill_sync(struct isc_spill *s)
{
	if (s->niov == 0 || s->err) {
		s->queued_records = 0;
		s->niov = 0;
		s->nhdr = 0;
		s->queued = 0;
		return s->err;
	}
	int r = check_fd(s);
	int i = 0;
	bool retried = false;
	uint64_t size0 = s->size;
	while (r == 0 && i < s->niov) {
		ssize_t n = writev(s->fd, s->iov + i, s->niov - i);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == EBADF && !retried && s->transient) {
				/* another thread of the program closed it between the check and
				 * the write (nothing was written): reopen once */
				retried = true;
				s->fd = -1;
				r = check_fd(s);
				continue;
			}
			r = -errno;
			break;
		}
		s->size += (uint64_t)n;
		/* skip what was written; adjust a partially written vector */
		while (i < s->niov && (size_t)n >= s->iov[i].iov_len) {
			n -= (ssize_t)s->iov[i].iov_len;
			i++;
		}
		if (i < s->niov) {
			s->iov[i].iov_base = (char *)s->iov[i].iov_base + n;
			s->iov[i].iov_len -= (size_t)n;
		}
	}
	if (r == 0) {
		s->records += s->queued_records;
	}
	s->queued_records = 0;
	s->niov = 0;
	s->nhdr = 0;
	s->queued = 0;
	if (r < 0 && s->size != size0) {
		/* a block cut short: the file goes back to its last whole block, so that the
		 * same blocks can be written again later */
		if (s->fd >= 0 && ftruncate(s->fd, (off_t)size0) == 0) {
			s->size = size0;
		} else {
			s->err = r; /* a torn block stays: nothing more may follow it */
		}
	}
	if (r < 0 && !isc_spill_err_transient(r)) {
		s->err = r;
	}
	return r;
}

bool isc_spill_err_transient(int err)
{
	/* a full disk or quota, a file-size limit, no descriptor or memory now: the
	 * records wait in memory and the write is tried again */
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG || err == -EMFILE ||
	       err == -ENFILE || err == -ENOMEM || err == -EINTR || err == -EAGAIN;
}

int isc_spill_acquire(struct isc_spill *s)
{
	return s->err ? s->err : check_fd(s);
}

void isc_spill_release(struct isc_spill *s)
{
	if (s->transient && s->fd >= 0 && s->fd_tid == gettid()) {
		close(s->fd);
		s->fd = -1;
	}
}

void isc_spill_close(struct isc_spill *s)
{
	if (s->fd >= 0) {
		if (s->fd_tid == gettid()) {
			close(s->fd); /* elsewhere the number is the program's, or another table's */
		}
		s->fd = -1;
	}
}

bool isc_spill_detect(const void *head, size_t n)
{
	return n >= 8 && memcmp(head, ISC_SPILL_MAGIC, 8) == 0;
}

int isc_spill_reader_open(struct isc_spill_reader *r, int fd)
{
	struct stat st;
	memset(r, 0, sizeof(*r));
	if (fstat(fd, &st) != 0) {
		return -errno;
	}
	if ((size_t)st.st_size < sizeof(struct isc_spill_header)) {
		return -EINVAL;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		return -errno;
	}
	const struct isc_spill_header *h = p;
	if (!isc_spill_detect(h->magic, 8) || h->version != ISC_SPILL_VERSION ||
	    h->record_size != sizeof(struct isc_event)) {
		munmap(p, (size_t)st.st_size);
		return -EINVAL;
	}
	r->base = p;
	r->size = (size_t)st.st_size;
	r->pid = h->pid;
	r->start_ns = h->start_ns;
	r->off = sizeof(*h);
	return 0;
}

void isc_spill_reader_rewind(struct isc_spill_reader *r)
{
	r->off = sizeof(struct isc_spill_header);
	r->torn = false;
}

int isc_spill_reader_next(struct isc_spill_reader *r, struct isc_spill_ref *b)
{
	if (r->off + sizeof(struct isc_spill_block) > r->size) {
		if (r->off != r->size) {
			r->torn = true;
			r->torn_at = r->off;
		}
		return 0;
	}
	struct isc_spill_block h;
	memcpy(&h, r->base + r->off, sizeof(h));
	size_t start = r->off + sizeof(h);
	if (h.size > r->size - start || h.type == 0 || h.type > ISC_BLK__MAX) {
		r->torn = true;
		r->torn_at = r->off;
		return 0;
	}
	b->type = h.type;
	b->data = r->base + start;
	b->size = (size_t)h.size;
	b->offset = r->off;
	size_t padded = (size_t)((h.size + 7) & ~7ull);
	r->off = start + (padded <= r->size - start ? padded : r->size - start);
	return 1;
}

void isc_spill_reader_close(struct isc_spill_reader *r)
{
	if (r->base) {
		munmap((void *)r->base, r->size);
		r->base = NULL;
	}
}

const char *isc_spill_err_reason(int err)
{
	switch (-err) {
	case ENOSPC:
		return "no space left on device";
	case EDQUOT:
		return "disk quota exceeded";
	case EFBIG:
		return "file too large";
	case EMFILE:
	case ENFILE:
		return "no descriptor";
	case ENOMEM:
		return "no memory";
	default:
		return "write error";
	}
}
