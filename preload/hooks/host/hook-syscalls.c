/* SPDX-License-Identifier: MIT */
/*
 * System calls and waits: the machinery the hooks of hook-io.c, hook-files.c and
 * hook-waits.c share.
 *
 * A hook measures its call with two clock reads (vDSO) and adds it to the thread's
 * aggregate for the call's name: count, total, max, bytes moved, errors - exact,
 * whatever the threshold. Only a call that lasted at least
 * INFERSCOPE_SYSCALL_THRESHOLD (10 µs by default) takes the slow path here and
 * becomes a cpu_syscall event, with the fd's target (what the descriptor is), the
 * CPU's NUMA node and, with INFERSCOPE_STACKS, a stack.
 *
 * ioctl on /dev/nvidia* is time in the GPU driver: those descriptors are known from
 * their path when our open hooks see them, or from the device's major number
 * (195) and /proc/self/fd the first time an ioctl meets one; the answer is cached
 * per descriptor and forgotten when our close hook sees it closed.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/config.h"
#include "preload/hooks/host/host.h"
#include "preload/core/arena.h"
#include "preload/core/intern.h"
#include "preload/core/export.h"
#include "preload/samplers/cpu-sampler.h"
#include "common/log.h"

#define D(n, nr, cat)                   \
	{                               \
		n, nr, ISC_SYSCAT_##cat \
	}

const struct isc_sys_desc isc_sys_table[ISC_SC__COUNT] = {
	[ISC_SC_READ] = D("read", SYS_read, IO),
	[ISC_SC_WRITE] = D("write", SYS_write, IO),
	[ISC_SC_PREAD] = D("pread", SYS_pread64, IO),
	[ISC_SC_PWRITE] = D("pwrite", SYS_pwrite64, IO),
	[ISC_SC_READV] = D("readv", SYS_readv, IO),
	[ISC_SC_WRITEV] = D("writev", SYS_writev, IO),
	[ISC_SC_PREADV] = D("preadv", SYS_preadv, IO),
	[ISC_SC_PWRITEV] = D("pwritev", SYS_pwritev, IO),
	[ISC_SC_PREADV2] = D("preadv2", SYS_preadv2, IO),
	[ISC_SC_PWRITEV2] = D("pwritev2", SYS_pwritev2, IO),
	[ISC_SC_RECV] = D("recv", SYS_recvfrom, NET),
	[ISC_SC_RECVFROM] = D("recvfrom", SYS_recvfrom, NET),
	[ISC_SC_RECVMSG] = D("recvmsg", SYS_recvmsg, NET),
	[ISC_SC_RECVMMSG] = D("recvmmsg", SYS_recvmmsg, NET),
	[ISC_SC_SEND] = D("send", SYS_sendto, NET),
	[ISC_SC_SENDTO] = D("sendto", SYS_sendto, NET),
	[ISC_SC_SENDMSG] = D("sendmsg", SYS_sendmsg, NET),
	[ISC_SC_SENDMMSG] = D("sendmmsg", SYS_sendmmsg, NET),
	[ISC_SC_ACCEPT] = D("accept", SYS_accept, NET),
	[ISC_SC_ACCEPT4] = D("accept4", SYS_accept4, NET),
	[ISC_SC_CONNECT] = D("connect", SYS_connect, NET),
	[ISC_SC_POLL] = D("poll", SYS_poll, WAIT),
	[ISC_SC_PPOLL] = D("ppoll", SYS_ppoll, WAIT),
	[ISC_SC_SELECT] = D("select", SYS_select, WAIT),
	[ISC_SC_PSELECT] = D("pselect", SYS_pselect6, WAIT),
	[ISC_SC_EPOLL_WAIT] = D("epoll_wait", SYS_epoll_wait, WAIT),
	[ISC_SC_EPOLL_PWAIT] = D("epoll_pwait", SYS_epoll_pwait, WAIT),
	[ISC_SC_MUTEX_LOCK] = D("pthread_mutex_lock", -1, WAIT),
	[ISC_SC_COND_WAIT] = D("pthread_cond_wait", -1, WAIT),
	[ISC_SC_COND_TIMEDWAIT] = D("pthread_cond_timedwait", -1, WAIT),
	[ISC_SC_COND_CLOCKWAIT] = D("pthread_cond_clockwait", -1, WAIT),
	[ISC_SC_SEM_WAIT] = D("sem_wait", -1, WAIT),
	[ISC_SC_SEM_TIMEDWAIT] = D("sem_timedwait", -1, WAIT),
	[ISC_SC_SEM_CLOCKWAIT] = D("sem_clockwait", -1, WAIT),
	[ISC_SC_WAIT] = D("wait", SYS_wait4, WAIT),
	[ISC_SC_WAIT3] = D("wait3", SYS_wait4, WAIT),
	[ISC_SC_WAIT4] = D("wait4", SYS_wait4, WAIT),
	[ISC_SC_WAITPID] = D("waitpid", SYS_wait4, WAIT),
	[ISC_SC_WAITID] = D("waitid", SYS_waitid, WAIT),
	[ISC_SC_NANOSLEEP] = D("nanosleep", SYS_nanosleep, SLEEP),
	[ISC_SC_CLOCK_NANOSLEEP] = D("clock_nanosleep", SYS_clock_nanosleep, SLEEP),
	[ISC_SC_USLEEP] = D("usleep", SYS_nanosleep, SLEEP),
	[ISC_SC_SLEEP] = D("sleep", SYS_nanosleep, SLEEP),
	[ISC_SC_OPEN] = D("open", SYS_open, FS),
	[ISC_SC_OPENAT] = D("openat", SYS_openat, FS),
	[ISC_SC_CLOSE] = D("close", SYS_close, FS),
	[ISC_SC_FSYNC] = D("fsync", SYS_fsync, FS),
	[ISC_SC_FDATASYNC] = D("fdatasync", SYS_fdatasync, FS),
	[ISC_SC_IOCTL] = D("ioctl", SYS_ioctl, IO),
	[ISC_SC_IOCTL_NVIDIA] = D("ioctl_nvidia", SYS_ioctl, DRIVER),
};

struct isc_sys_hot isc_sys;
static uint32_t name_ids[ISC_SC__COUNT];

/* ---- fd targets ---- */

#define FD_CACHE 65536
enum { FDC_UNKNOWN = 0, FDC_OTHER = 1, FDC_NVIDIA = 2 };
static _Atomic uint8_t fd_class[FD_CACHE];

static bool path_is_nvidia(const char *path)
{
	return path && strncmp(path, "/dev/nvidia", 11) == 0;
}

unsigned isc_fd_target_of_path(const char *path)
{
	return path_is_nvidia(path) ? ISC_FD_NVIDIA : ISC_FD_UNKNOWN;
}

/* Character devices already named by their path, by device number: a device number
 * names one device while the system runs, and the path lookup (a readlink through
 * /proc) costs more than the slow call that asks. Entries are written once (a race
 * loses an entry, never mixes two: key and target in one word). */
#define CHR_SEEN 16
static _Atomic uint64_t chr_seen[CHR_SEEN]; /* rdev << 8 | target, 0: free */

static unsigned char_device_target(int fd, dev_t rdev)
{
	unsigned maj = major(rdev);
	if (maj == 195) {
		return ISC_FD_NVIDIA; /* nvidia0..N, nvidiactl, nvidia-modeset */
	}
	if (maj == 4 || maj == 5 || (maj >= 136 && maj <= 143)) {
		return ISC_FD_TTY;
	}
	for (unsigned i = 0; i < CHR_SEEN; i++) {
		uint64_t e = atomic_load_explicit(&chr_seen[i], memory_order_relaxed);
		if (e == 0) {
			break;
		}
		if (e >> 8 == (uint64_t)rdev) {
			return (unsigned)(e & 0xff);
		}
	}
	/* nvidia-uvm and nvidia-caps have dynamic majors: ask for the path */
	char link[32], path[64];
	isc_fmt(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0) {
		return ISC_FD_OTHER; /* closed meanwhile: nothing learnt */
	}
	path[n] = '\0';
	unsigned r = path_is_nvidia(path) ? ISC_FD_NVIDIA : ISC_FD_OTHER;
	for (unsigned i = 0; i < CHR_SEEN && (uint64_t)rdev < (1ull << 56); i++) {
		uint64_t want = 0;
		if (atomic_compare_exchange_strong(&chr_seen[i], &want, (uint64_t)rdev << 8 | r) ||
		    want >> 8 == (uint64_t)rdev) {
			break;
		}
	}
	return r;
}

unsigned isc_fd_target(int fd)
{
	struct stat st;
	int saved = errno;
	unsigned r = ISC_FD_UNKNOWN;
	if (fd >= 0 && fstat(fd, &st) == 0) {
		switch (st.st_mode & S_IFMT) {
		case S_IFREG:
		case S_IFDIR:
		case S_IFBLK:
			r = ISC_FD_FILE;
			break;
		case S_IFSOCK:
			r = ISC_FD_SOCKET;
			break;
		case S_IFIFO:
			r = ISC_FD_PIPE;
			break;
		case S_IFCHR:
			r = char_device_target(fd, st.st_rdev);
			break;
		default:
			r = ISC_FD_OTHER;
			break;
		}
	}
	errno = saved;
	return r;
}

void isc_fd_opened(int fd, const char *path)
{
	if (fd >= 0 && fd < FD_CACHE) {
		atomic_store_explicit(&fd_class[fd],
				      path_is_nvidia(path) ? FDC_NVIDIA : FDC_UNKNOWN,
				      memory_order_relaxed);
	}
}

void isc_fd_closed(int fd)
{
	if (fd >= 0 && fd < FD_CACHE) {
		atomic_store_explicit(&fd_class[fd], FDC_UNKNOWN, memory_order_relaxed);
	}
}

bool isc_fd_is_nvidia(int fd)
{
	if (fd < 0) {
		return false;
	}
	if (fd >= FD_CACHE) {
		return isc_fd_target(fd) == ISC_FD_NVIDIA;
	}
	unsigned c = atomic_load_explicit(&fd_class[fd], memory_order_relaxed);
	if (c == FDC_UNKNOWN) {
		unsigned t = isc_fd_target(fd);
		if (t == ISC_FD_UNKNOWN) {
			return false; /* not open: nothing to remember */
		}
		c = t == ISC_FD_NVIDIA ? FDC_NVIDIA : FDC_OTHER;
		atomic_store_explicit(&fd_class[fd], (uint8_t)c, memory_order_relaxed);
	}
	return c == FDC_NVIDIA;
}

/* ---- the slow path ---- */

void isc_sys_record(const struct isc_sys_call *c, uint64_t dur, int fd, uint64_t bytes, int64_t ret,
		    int err)
{
	if (isc_sys_table[c->sc].nr < 0 && !isc_host_may_start_collector()) {
		return; /* a lock wait may be inside an allocator: see host.h */
	}
	int saved = errno;
	isc_tls_guard++;
	uint64_t dur_ns = isc_sys_units_to_ns(dur);
	uint64_t start = isc_sys.tsc ? isc_now() - dur_ns : c->t0;
	const struct isc_sys_desc *d = &isc_sys_table[c->sc];
	unsigned target = ISC_FD_UNKNOWN;
	if (c->sc == ISC_SC_IOCTL_NVIDIA) {
		target = ISC_FD_NVIDIA;
	} else if (fd >= 0 && c->sc != ISC_SC_CLOSE) {
		target = isc_fd_target(fd); /* a closed fd would name its successor */
	}
	unsigned cat = d->category;
	if (cat == ISC_SYSCAT_IO && target == ISC_FD_SOCKET) {
		cat = ISC_SYSCAT_NET;
	}
	uint64_t pcs[ISC_EVENT_STACK_WORDS];
	uint16_t nf, npy;
	unsigned nw = isc_stacks_capture_event(pcs, ISC_EVENT_STACK_WORDS, &nf, &npy);
	unsigned n = 1 + isc_stack_records(nw);
	struct isc_event *e = isc_event_reserve(ISC_EV_SYSCALL, n);
	if (e) {
		e->ts = start;
		e->dur = dur_ns;
		e->tid = c->t->tid;
		e->kind = ISC_EV_SYSCALL;
		e->flags = (err ? ISC_EVF_ERRNO : 0) | (isc_config.stacks ? ISC_EVF_STACK_TEXT : 0);
		e->name = name_ids[c->sc];
		e->aux = 0;
		e->u.syscall.ret = ret;
		e->u.syscall.bytes = bytes;
		e->u.syscall.fd = fd;
		e->u.syscall.err = err;
		e->u.syscall.nr = d->nr;
		e->u.syscall.category = (uint8_t)cat;
		e->u.syscall.target = (uint8_t)target;
		e->u.syscall.frames = nf;
		e->u.syscall.py_frames = npy;
		isc_stacks_fill(e + 1, c->t->tid, pcs, nw);
		isc_event_commit(n);
		c->t->syscalls[c->sc].events++;
	}
	c->t->numa_node = isc_numa_node_now() + 1;
	isc_tls_guard--;
	/* a slow call is where a thread leaves the CPU: the CPU sample its timer owes */
	isc_sampler_catch_up(c->t);
	errno = saved;
}

/* ---- trace contributions and init ---- */

uint64_t *isc_sys_hist_new(struct isc_syscall_agg *a)
{
	int saved = errno;
	isc_tls_guard++;
	uint64_t *h = isc_arena_alloc(ISC_SYSCALL_HIST * sizeof(*h), 64);
	if (h != NULL) {
		memset(h, 0, ISC_SYSCALL_HIST * sizeof(*h));
	}
	a->hist = h;
	isc_tls_guard--;
	errno = saved;
	return h;
}

void isc_hooks_syscalls_fork_child(void)
{
	struct isc_thread *t = isc_tls_self;
	if (t == NULL) {
		return;
	}
	for (unsigned i = 0; i < ISC_SYSCALL_SLOTS; i++) {
		uint64_t *h = t->syscalls[i].hist; /* kept: the child's own calls go there */
		if (h != NULL) {
			memset(h, 0, ISC_SYSCALL_HIST * sizeof(*h));
		}
		memset(&t->syscalls[i], 0, sizeof(t->syscalls[i]));
		t->syscalls[i].hist = h;
	}
}

void isc_hooks_syscalls_init(void)
{
	for (unsigned i = 0; i < ISC_SC__COUNT; i++) {
		name_ids[i] =
			isc_intern_cstr(i == ISC_SC_IOCTL_NVIDIA ? "ioctl" : isc_sys_table[i].name);
	}
	isc_hooks_io_resolve();
	isc_hooks_files_resolve();
	isc_hooks_waits_resolve();
	isc_host_clock_init();
	isc_sys.on = isc_config.hook_syscalls;
}
