/* SPDX-License-Identifier: MIT */
#include "preload/lifecycle.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "preload/core/export.h"
#include "common/clock.h"
#include "preload/core/collector.h"
#include "preload/core/arena.h"
#include "preload/core/threads.h"
#include "common/config.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/samplers/cpu-sampler.h"
#include "preload/hooks/host/host.h"
#include "preload/core/ids.h"
#include "preload/core/intern.h"
#include "common/log.h"
#include "preload/recorder.h"
#include "preload/remote.h"
#include "preload/session.h"
#include "preload/signals.h"
#include "preload/window.h"

_Atomic uint64_t isc_id_counter;

static _Atomic int init_state; /* 0 none, 1 running, 2 done */
static _Atomic bool flushed;
/* Set by the exec hook for the flush it asks: the next image records, so the spill
 * is handed over to it (a segment of one trace) instead of written as a trace. */
static bool exec_hand_over;
static bool handed_over;
/* Around a fork (collector.h, "Paused around a fork"). */
static bool paused_for_fork;

/* Recording is live between the end of init and the flush (core/capture.c). */
static void set_live(void)
{
	isc_capture_set_live(atomic_load(&init_state) == 2 && !atomic_load(&flushed));
}

/*
 * The families of hooks and samplers, in the one order everything happens in: init
 * (from the constructor), flush (at the start of every flush, before the collector
 * stops: CUPTI's forced flush first, so that its records can still be spilled) and
 * fork_child (after the core and the session are reset in the child). The handlers
 * of the whole library are registered here and nowhere else:
 *   - the ELF constructor and destructor, below;
 *   - pthread_atfork(fork_prepare, fork_parent, fork_child), in isc_lifecycle_init();
 *   - SIGTERM/SIGINT (opt-in) and the snapshot signal, in isc_signals_install(), when the
 *     collector starts;
 *   - the CPU sampler's real-time signal, in isc_signals_install_sampler(), from the
 *     constructor: the one handler installed that early, because a CPU-bound program
 *     may never call anything hooked and its main thread must be sampled from the start;
 *   - one exception: gpu/cupti.c registers an atexit handler when CUPTI starts (the
 *     driver's injection or the first CUDA call), because it must run before the
 *     CUDA runtime's own atexit teardown, which is registered only then.
 */
struct isc_family {
	const char *name;
	void (*init)(void);
	void (*flush)(void);
	void (*fork_child)(void);
};

static const struct isc_family families[] = {
	{ "cuda", isc_hooks_cuda_init, isc_hooks_cuda_flush, isc_hooks_cuda_fork_child },
	{ "nvtx", isc_hooks_nvtx_init, isc_hooks_nvtx_flush, NULL },
	{ "stacks", isc_stacks_init, NULL, NULL },
	{ "cpu-samples", isc_samplers_init, NULL, isc_samplers_fork_child },
	{ "numa", isc_numa_init, isc_numa_flush, NULL },
	{ "cpu-time", isc_cpu_time_init, isc_cpu_time_flush, NULL },
	{ "malloc", isc_hooks_malloc_init, NULL, isc_hooks_malloc_fork_child },
	{ "syscalls", isc_hooks_syscalls_init, NULL, isc_hooks_syscalls_fork_child },
	{ NULL, NULL, NULL, NULL },
};

static void resolve_process_hooks(void);

/* Recording paused: the control socket answers all the same (a vfork child shares our
 * memory: not there, and ask again). */
static bool idle_start(void)
{
	if (syscall(SYS_getpid) != isc_session.pid || isc_fork_quiet()) {
		return false;
	}
	isc_tls_guard++;
	isc_remote_start();
	isc_tls_guard--;
	return true;
}

/* First chunk taken anywhere: the process records, so the collector starts. Armed
 * again after a fork that paused the collector: a chunk taken once the quiet period is
 * over (re)starts it. */
static void on_first_chunk(void)
{
	if (syscall(SYS_getpid) != isc_session.pid) {
		return; /* a vfork child shares our memory: never start threads there */
	}
	if (isc_fork_quiet()) {
		isc_buffer_rearm_first_chunk();
		return;
	}
	if (atomic_load(&isc_collector_paused)) {
		isc_collector_resume_due();
		return;
	}
	isc_signals_install();
	isc_collector_start();
}

static void on_chunk_full(void)
{
	/* More than a quarter of the memory in flight: do not wait for the tick. */
	if (isc_buffer_chunks_in_use() > isc_buffer_chunks_total() / 4) {
		isc_collector_wake();
	}
}

/* ---- fork ---- */

/*
 * A program that is single-threaded but for the library's threads forks: they stop
 * here and start again a quiet period after fork() returned in the parent, so that
 * the parent does not look multi-threaded to itself (CPython >= 3.12 warns when it
 * does). With other threads of its own the program is multi-threaded anyway, and a
 * listener busy with a capture window stays.
 */
/* The program's threads once the threads of ours just joined have left the kernel's
 * count too, that is at most `before` again: pthread_join returns when a thread's stack
 * is free, a little before the kernel has reaped it (waited for 100 ms at most). */
static long settled_threads(long before)
{
	long n = isc_program_threads();
	for (uint64_t end = isc_kernel_now() + 100000000ull; n > before && isc_kernel_now() < end;
	     n = isc_program_threads()) {
		isc_kernel_sleep(50000);
	}
	return n;
}

static void fork_prepare(void)
{
	isc_tls_guard++;
	paused_for_fork = false;
	long n = syscall(SYS_getpid) == isc_session.pid ? isc_program_threads() : -1;
	/* 2: the collector's tick may be starting the listener; stopping it ends that */
	if (n == 1 || n == 2) {
		isc_collector_pause(); /* isc_collector_paused says whether it stopped */
		paused_for_fork = settled_threads(n) == 1 && isc_remote_pause();
		if (paused_for_fork) {
			settled_threads(1);
		}
	}
	isc_tls_guard--;
	isc_intern_fork_prepare();
}

static void fork_parent(void)
{
	isc_intern_fork_release();
	isc_tls_guard++;
	isc_fork_quiet_begin(paused_for_fork);
	if (paused_for_fork) {
		isc_buffer_rearm_first_chunk(); /* a chunk taken after the quiet period */
	}
	if (atomic_load(&isc_collector_paused)) {
		isc_collector_resume_due(); /* at once unless quiet */
	} else if (paused_for_fork) {
		set_live(); /* a paused process: the idle hook starts the listener */
	}
	isc_tls_guard--;
}

static void fork_child(void)
{
	isc_arena_fork_child(); /* before anything of ours allocates in the child */
	isc_intern_fork_release();
	paused_for_fork = false;
	isc_tls_guard++;
	isc_collector_reset_after_fork();
	isc_buffer_reset_after_fork();
	isc_session_reset_after_fork();
	isc_remote_reset_after_fork();
	isc_collector_set_owner(isc_session.pid, isc_session.is_root);
	atomic_store(&flushed, false);
	set_live();
	isc_tls_guard--;
	for (const struct isc_family *f = families; f->name; f++) {
		if (f->fork_child) {
			f->fork_child();
		}
	}
}

/* ---- constructor and destructor ---- */

void isc_lifecycle_init(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&init_state, &expected, 1)) {
		return;
	}
	isc_tls_guard++;
	isc_config_load(&isc_config, NULL);
	isc_log_set_level(isc_config.debug);
	if (!isc_config.enable) {
		isc_tls_guard--;
		return; /* init_state stays 1: every hook passes through */
	}
	if (isc_intern_init(64u << 20, 1u << 20) < 0 ||
	    isc_buffer_init(isc_config.max_memory) < 0) {
		isc_error("cannot reserve memory for event buffers; recording is off");
		isc_tls_guard--;
		return;
	}
	isc_session_init();
	struct isc_collector_sink sink = { isc_session_spill, isc_session_snapshot, NULL, NULL };
	if (isc_config.continuous) {
		sink.full = isc_recorder_full;
		sink.rotate = isc_recorder_rotate;
	}
	isc_collector_set_sink(&sink);
	isc_remote_init();
	isc_capture_set_idle(idle_start);
	isc_collector_add_tick(isc_remote_tick);
	if (isc_config.continuous) {
		isc_collector_add_tick(isc_recorder_tick);
	}
	isc_collector_add_tick(isc_window_tick);
	/* A window's drain while the process goes on: continuous recording keeps the
	 * activities in flight for the segments (a forced flush would zero their times),
	 * so it asks for completed records only. */
	isc_window_set_drain(isc_config.continuous ? isc_hooks_cuda_flush_completed
						   : isc_hooks_cuda_flush);
	isc_collector_set_owner(isc_session.pid, isc_session.is_root);
	isc_capture_init(isc_session.start_ns, isc_config.delay_ns, isc_config.duration_ns,
			 isc_config.start_paused);
	isc_buffer_on_first_chunk = on_first_chunk;
	isc_buffer_on_full = on_chunk_full;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	resolve_process_hooks();
	for (const struct isc_family *f = families; f->name; f++) {
		f->init();
	}
	isc_signals_install_sampler();
	atomic_store_explicit(&init_state, 2, memory_order_release);
	isc_core_set_ready();
	set_live();
	isc_tls_guard--;
}

__attribute__((constructor)) static void isc_constructor(void)
{
	/* even with INFERSCOPE_ENABLE=0: a pass-through mmap must reach the next one */
	isc_hooks_mmap_resolve();
	isc_lifecycle_init();
}

__attribute__((destructor)) static void isc_destructor(void)
{
	isc_lifecycle_flush("exit");
}

/* ---- flush ---- */

struct final_write {
	const char *reason;
	bool wrote;
};

/* The flush's files: the last spill, then the trace (or the segment an exec hands on). */
static void write_out(void *arg)
{
	struct final_write *fw = arg;
	bool exec = strcmp(fw->reason, "exec") == 0;
	handed_over = false;
	if (exec && exec_hand_over && !isc_config.continuous) {
		isc_collector_spill(true);
		handed_over = isc_session_end_segment() == 0;
		fw->wrote = handed_over;
	}
	if (handed_over) {
		/* the next image writes the trace of the chain */
	} else if (isc_session.is_root || isc_session_did_work()) {
		isc_collector_spill(true);
		fw->wrote = isc_session_finish(fw->reason) == 0;
	} else if (isc_config.continuous) {
		isc_recorder_discard();
	} else {
		isc_session_discard();
	}
}

static void snapshot_here(void *reason)
{
	isc_session_snapshot(reason);
}

bool isc_lifecycle_flush(const char *reason)
{
	/* getpid through the syscall: a vfork child shares our memory and our cached pid,
	 * and must never write (its parent will). */
	if (!isc_core_ready() || syscall(SYS_getpid) != isc_session.pid ||
	    atomic_exchange(&flushed, true)) {
		return false;
	}
	bool wrote = false;
	isc_tls_guard++;
	set_live();
	for (const struct isc_family *f = families; f->name; f++) {
		if (f->flush) {
			f->flush();
		}
	}
	if (!isc_collector_stop()) {
		/* interrupted the collector itself (a signal on its thread) or it hangs: the
		 * spill file keeps what it has, and the analyzer can read it */
		isc_tls_guard--;
		return false;
	}
	isc_remote_stop();
	isc_session.flushing = true;
	struct final_write fw = { reason, false };
	/* the spill, the trace and the files read to symbolise it are opened where the
	 * program's other threads never see them */
	isc_threads_run_private(write_out, &fw);
	wrote = fw.wrote;
	isc_tls_guard--;
	return wrote;
}

int isc_lifecycle_snapshot(const char *reason)
{
	if (!isc_core_ready() || atomic_load(&flushed)) {
		return -ESRCH;
	}
	if (isc_collector_running()) {
		/* the collector owns the spill file: ask it, and wait so that the file exists
		 * when the caller goes on */
		unsigned seq = __atomic_load_n(&isc_session.snapshot_seq, __ATOMIC_ACQUIRE);
		uint64_t deadline = isc_kernel_now() + 10 * 1000000000ull;
		isc_collector_request_snapshot();
		while (__atomic_load_n(&isc_session.snapshot_seq, __ATOMIC_ACQUIRE) == seq) {
			if (isc_kernel_now() > deadline) {
				return -ETIMEDOUT;
			}
			isc_kernel_sleep(1000000);
		}
		return 0;
	}
	isc_tls_guard++;
	isc_threads_run_private(snapshot_here, (void *)reason);
	isc_tls_guard--;
	return 0;
}

/* ---- _exit and exec ---- */

typedef void (*exit_fn)(int);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static struct {
	exit_fn exit_, Exit_;
	execve_fn execve, execvpe;
	fexecve_fn fexecve;
} real;

static void resolve_process_hooks(void)
{
	real.exit_ = (exit_fn)dlsym(RTLD_NEXT, "_exit");
	real.Exit_ = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
	real.execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
	real.execvpe = (execve_fn)dlsym(RTLD_NEXT, "execvpe");
	real.fexecve = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
}

static __attribute__((noreturn)) void leave(exit_fn fn, int status)
{
	isc_lifecycle_flush("_exit");
	if (fn) {
		fn(status);
	}
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

ISC_EXPORT void _exit(int status)
{
	if (real.exit_ == NULL) {
		resolve_process_hooks();
	}
	leave(real.exit_, status);
}

ISC_EXPORT void _Exit(int status)
{
	if (real.Exit_ == NULL) {
		resolve_process_hooks();
	}
	leave(real.Exit_, status);
}

/* Would exec find something to run? Python's os.execvpe tries every PATH entry with
 * execve: only the attempt that can succeed may write the trace. */
static bool can_exec(const char *file, bool search)
{
	if (file == NULL || *file == '\0') {
		return false;
	}
	if (!search || strchr(file, '/')) {
		return access(file, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	path = path ? path : "/bin:/usr/bin";
	char buf[PATH_MAX];
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t n = (size_t)(end - p);
		if (n + strlen(file) + 2 < sizeof(buf)) {
			memcpy(buf, p, n); /* an empty PATH entry means the current directory */
			isc_fmt(buf + n, sizeof(buf) - n, "%s%s", n ? "/" : "./", file);
			if (access(buf, X_OK) == 0) {
				return true;
			}
		}
		if (*end == '\0') {
			return false;
		}
		p = end;
	}
}

/* envp plus INFERSCOPE_EXEC_SEQ for the image that replaces us (mmap'd: no malloc
 * between the flush and the exec). */
static char **env_with_seq(char *const envp[], bool over, size_t *bytes)
{
	size_t n = 0;
	while (envp && envp[n]) {
		n++;
	}
	*bytes = (n + 2) * sizeof(char *);
	char **out = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED) {
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(envp[i], "INFERSCOPE_EXEC_SEQ=", 20) != 0) {
			out[k++] = envp[i];
		}
	}
	out[k++] = (char *)isc_session_exec_env(over);
	out[k] = NULL;
	return out;
}

enum exec_kind { EXEC_PATH, EXEC_SEARCH, EXEC_FD };

static int do_exec(enum exec_kind kind, const char *file, int fd, char *const argv[],
		   char *const envp[])
{
	if (real.execve == NULL) {
		resolve_process_hooks();
	}
	bool mine = isc_core_ready() && syscall(SYS_getpid) == isc_session.pid;
	bool wrote = false;
	if (mine &&
	    (kind == EXEC_FD ? fcntl(fd, F_GETFD) >= 0 : can_exec(file, kind == EXEC_SEARCH))) {
		exec_hand_over = isc_session_next_image_records(envp);
		wrote = isc_lifecycle_flush("exec");
		exec_hand_over = false;
	}
	bool over = wrote && handed_over;
	size_t bytes = 0;
	char **env = wrote ? env_with_seq(envp, over, &bytes) : NULL;
	char *const *use = env ? env : envp;
	int r;
	if (kind == EXEC_FD) {
		r = real.fexecve(fd, argv, use);
	} else if (kind == EXEC_SEARCH) {
		r = real.execvpe(file, argv, use);
	} else {
		r = real.execve(file, argv, use);
	}
	/* still here: the exec failed */
	int saved = errno;
	if (env) {
		munmap(env, bytes);
	}
	if (mine && atomic_load(&flushed)) {
		isc_tls_guard++;
		if (over) {
			isc_session_segment_resumed();
		} else if (wrote) {
			isc_session_after_failed_exec();
		}
		atomic_store(&flushed, false);
		set_live();
		isc_collector_start();
		isc_tls_guard--;
	}
	errno = saved;
	return r;
}

ISC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_PATH, path, -1, argv, envp);
}

ISC_EXPORT int execv(const char *path, char *const argv[])
{
	return do_exec(EXEC_PATH, path, -1, argv, environ);
}

ISC_EXPORT int execvp(const char *file, char *const argv[])
{
	return do_exec(EXEC_SEARCH, file, -1, argv, environ);
}

ISC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_SEARCH, file, -1, argv, envp);
}

ISC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_FD, NULL, fd, argv, envp);
}

/* execl and friends: the arguments into an array on the stack, then as above. */
#define COLLECT_ARGS(first, ap, argv, extra_env) \
	size_t argc_ = 1;                        \
	va_start(ap, first);                     \
	while (va_arg(ap, char *) != NULL) {     \
		argc_++;                         \
	}                                        \
	va_end(ap);                              \
	char *argv[argc_ + 1];                   \
	va_start(ap, first);                     \
	argv[0] = (char *)(first);               \
	for (size_t i_ = 1; i_ <= argc_; i_++) { \
		argv[i_] = va_arg(ap, char *);   \
	}                                        \
	extra_env;                               \
	va_end(ap)

ISC_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return do_exec(EXEC_PATH, path, -1, argv, environ);
}

ISC_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, ap, argv, (void)0);
	return do_exec(EXEC_SEARCH, file, -1, argv, environ);
}

ISC_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;
	COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char *const *));
	return do_exec(EXEC_PATH, path, -1, argv, envp);
}
