/* SPDX-License-Identifier: MIT */
#include "preload/session.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "preload/core/collector.h"
#include "common/clock.h"
#include "common/config.h"
#include "preload/hooks/host/host.h"
#include "preload/core/ids.h"
#include "preload/core/intern.h"
#include "common/log.h"
#include "preload/core/procfs.h"
#include "preload/scope.h"
#include "preload/recorder.h"
#include "preload/trailer.h"
#include "format/scratch.h"
#include "format/convert.h"
#include "preload/samplers/cpu-sampler.h"

struct isc_session isc_session;

static char exec_env[PATH_MAX + 96];

static void open_scopes(struct isc_vec *v, uint64_t now);
static void write_lost_sidecar(const char *trace, int err);

static int env_int(const char *name, int fallback)
{
	const char *v = getenv(name);
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;
	return (v && *v && *end == '\0' && x > 0) ? (int)x : fallback;
}

void isc_session_init(void)
{
	struct isc_session *s = &isc_session;
	char buf[32];

	s->pid = getpid();
	s->ppid = getppid();
	s->start_ns = isc_now();
	s->anchor_real_ns = isc_realtime_ns();
	s->anchor_mono_ns = isc_now();
	s->root_pid = env_int("INFERSCOPE_ROOT_PID", 0);
	if (s->root_pid == 0) {
		s->root_pid = s->pid;
		isc_fmt(buf, sizeof(buf), "%d", s->pid);
		setenv("INFERSCOPE_ROOT_PID", buf, 1);
	}
	s->is_root = s->root_pid == s->pid;
	/* "<pid>:<n>:<segment>:<next id>:<work>:<output>": set by our exec hook for the
	 * image that replaces us (a variable inherited from another process has another
	 * pid). The output path is the earlier image's, absolute: this image may run in
	 * another directory (a wrapper that cd'd) and must find the spill it was left. */
	const char *seq = getenv("INFERSCOPE_EXEC_SEQ");
	const char *handed_output = NULL;
	char *p;
	if (seq && strtol(seq, &p, 10) == s->pid && *p == ':') {
		s->exec_seq = (unsigned)strtoul(p + 1, &p, 10);
		if (*p == ':') {
			s->segment = (unsigned)strtoul(p + 1, &p, 10);
		}
		if (*p == ':') {
			/* ids (scopes, correlation) go on where the earlier image stopped:
			 * one trace, no id twice */
			uint64_t next = strtoull(p + 1, &p, 10);
			if (next > atomic_load(&isc_id_counter)) {
				atomic_store(&isc_id_counter, next);
			}
		}
		s->chain_work = *p == ':' && p[1] == '1';
		if (*p == ':' && p[1] != '\0' && p[2] == ':' && p[3] == '/') {
			handed_output = p + 3;
		}
	}
	if (handed_output) {
		isc_fmt(s->output, sizeof(s->output), "%s", handed_output);
	} else {
		isc_session_resolve_output();
	}
	/* Descendants resolve the same path whatever their working directory: the traces
	 * of one run land together. */
	const char *env_out = getenv("INFERSCOPE_OUTPUT");
	if (env_out == NULL || strcmp(env_out, s->output) != 0) {
		setenv("INFERSCOPE_OUTPUT", s->output, 1);
	}
	isc_session_make_paths();
}

void isc_session_reset_after_fork(void)
{
	struct isc_session *s = &isc_session;
	isc_spill_close(&s->spill);
	s->spill_open = false;
	s->spill_failed = false;
	s->flushing = false;
	s->spill_retry_ns = 0;
	s->pid = getpid();
	s->ppid = getppid();
	s->is_root = false;
	s->exec_seq = 0;
	s->segment = 0;
	s->chain_work = false;
	s->snapshot_seq = 0;
	s->start_ns = isc_now();
	isc_recorder_reset_after_fork();
	isc_session_make_paths();
}

void isc_session_after_failed_exec(void)
{
	struct isc_session *s = &isc_session;
	s->exec_seq++;
	s->spill_open = false;
	s->spill_failed = false;
	s->flushing = false; /* recording goes on in this image */
	s->spill_retry_ns = 0;
	isc_session_make_paths();
}

const char *isc_session_exec_env(bool handed_over)
{
	struct isc_session *s = &isc_session;
	if (handed_over) {
		isc_fmt(exec_env, sizeof(exec_env), "INFERSCOPE_EXEC_SEQ=%d:%u:%u:%llu:%d:%s",
			s->pid, s->exec_seq, s->segment + 1,
			(unsigned long long)atomic_load(&isc_id_counter) + 1,
			isc_session_did_work() ? 1 : 0, s->output);
	} else {
		isc_fmt(exec_env, sizeof(exec_env), "INFERSCOPE_EXEC_SEQ=%d:%u", s->pid,
			s->exec_seq + 1);
	}
	return exec_env;
}

static const char *lib_name(void)
{
	static char name[NAME_MAX + 1];
	Dl_info info;
	if (name[0] == '\0' && dladdr((void *)lib_name, &info) != 0 && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');
		isc_fmt(name, sizeof(name), "%s", slash ? slash + 1 : info.dli_fname);
	}
	return name[0] ? name : "libinferscope.so";
}

static const char *env_get(char *const envp[], const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; envp && envp[i]; i++) {
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=') {
			return envp[i] + n + 1;
		}
	}
	return NULL;
}

bool isc_session_next_image_records(char *const envp[])
{
	const char *preload = env_get(envp, "LD_PRELOAD");
	const char *enable = env_get(envp, "INFERSCOPE_ENABLE");
	bool on = true;
	if (enable && isc_parse_bool(enable, &on) && !on) {
		return false;
	}
	return preload && strstr(preload, lib_name()) != NULL;
}

int isc_session_end_segment(void)
{
	struct isc_session *s = &isc_session;
	struct isc_spill *sp = isc_session_spill();
	struct isc_vec seg, scopes;
	uint64_t now = isc_now();
	int r = sp ? isc_spill_sync(sp) : -EIO;
	if (r < 0 || strncmp(sp->path, "/proc/", 6) == 0) {
		return r < 0 ? r : -EXDEV; /* an in-memory spill cannot outlive the image */
	}
	s->segment_mark = sp->size;
	open_scopes(&scopes, now);
	static struct isc_spill_events hdr; /* the queue keeps a pointer until the sync */
	hdr.count = (uint32_t)scopes.len;
	if (scopes.len > 0) {
		isc_spill_queue(sp, ISC_BLK_EVENTS, &hdr, sizeof(hdr), scopes.data,
				scopes.len * sizeof(struct isc_event));
	}
	if (isc_trailer_segment(&seg, now)) {
		isc_spill_queue(sp, ISC_BLK_SEGMENT, seg.data, seg.len, NULL, 0);
	}
	r = isc_spill_sync(sp);
	isc_vec_finish(&seg);
	isc_vec_finish(&scopes);
	isc_spill_close(sp);
	return r;
}

void isc_session_segment_resumed(void)
{
	struct isc_session *s = &isc_session;
	/* still our file (by name, dev and inode): drop the SEGMENT block */
	if (isc_spill_truncate(&s->spill, s->segment_mark) < 0) {
		isc_error("exec failed and the spill cannot be cut back: this image's later events "
			  "are recorded as a segment of their own");
	}
}

void isc_session_discard(void)
{
	struct isc_session *s = &isc_session;
	if (s->spill_open) {
		isc_spill_close(&s->spill);
		s->spill_open = false;
	} else if (s->segment == 0) {
		return; /* no file: none was opened, and no earlier image left one */
	}
	unlink(s->spill_path);
}

/* CPU time that makes a descendant with host events only worth a file. */
#define WORK_CPU_NS (100 * 1000000ull)

bool isc_session_did_work(void)
{
	uint32_t collector = isc_collector_tid();
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		/* annotations, CUDA and GPU events always count */
		if (t->tid != collector && t->recorded > isc_host_events(t)) {
			return true;
		}
	}
	/* Host events alone (system calls, allocations) are what every shell and wrapper
	 * script does; a worker that tokenises for its parent does them too, but also
	 * computes: CPU time tells the two apart. */
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0) {
		return false;
	}
	if (isc_session.chain_work) {
		return true; /* an earlier image of this process did */
	}
	uint64_t ns = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
		      ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
	return ns >= WORK_CPU_NS;
}

struct isc_spill *isc_session_spill(void)
{
	struct isc_session *s = &isc_session;
	if (isc_config.continuous) {
		return isc_recorder_spill();
	}
	if (s->spill_open) {
		return &s->spill;
	}
	if (s->spill_failed || (!s->flushing && isc_kernel_now() < s->spill_retry_ns)) {
		return NULL;
	}
	int r = -ENOENT;
	if (s->segment > 0) {
		/* the spill an earlier image left us: our META block starts our segment */
		r = isc_spill_append(&s->spill, s->spill_path, (uint64_t)s->pid);
	}
	if (r < 0) {
		r = isc_spill_create(&s->spill, s->spill_path, (uint64_t)s->pid, s->start_ns);
	}
	if (r < 0 && !s->flushing) {
		/* While the program runs a spill in memory would be a descriptor it can see
		 * (a memfd has no name to reopen it by): the records stay in the event
		 * buffers instead, and the file is tried again a second later. */
		uint64_t now = isc_kernel_now();
		if (s->spill_retry_ns == 0) {
			isc_error("cannot create %s (%s): events stay in memory (at most "
				  "INFERSCOPE_MAX_MEMORY) until the file can be made",
				  s->spill_path, strerror(-r));
		}
		s->spill_retry_ns = now + 1000000000ull;
		return NULL;
	}
	if (r < 0) {
		isc_error("cannot create %s (%s): the trace is made from a spill in memory",
			  s->spill_path, strerror(-r));
		r = isc_spill_create_memfd(&s->spill, (uint64_t)s->pid, s->start_ns);
	}
	if (r < 0) {
		s->spill_failed = true;
		isc_error("cannot keep a spill in memory either (%s): events are lost",
			  strerror(-r));
		return NULL;
	}
	struct isc_vec meta, sysinfo;
	if (isc_trailer_start(&meta, &sysinfo)) {
		isc_spill_queue(&s->spill, ISC_BLK_META, meta.data, meta.len, NULL, 0);
		isc_spill_queue(&s->spill, ISC_BLK_SYSINFO, sysinfo.data, sysinfo.len, NULL, 0);
		isc_spill_sync(&s->spill);
	}
	isc_vec_finish(&meta);
	isc_vec_finish(&sysinfo);
	s->spill_open = true;
	return &s->spill;
}

/* Scopes still open: written as events ending now, flagged unterminated. */
static void open_scopes(struct isc_vec *v, uint64_t now)
{
	isc_vec_init(v, sizeof(struct isc_event));
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		uint32_t depth = t->depth < ISC_SCOPE_MAX ? t->depth : ISC_SCOPE_MAX;
		for (uint32_t d = 0; d < depth; d++) {
			const struct isc_scope_frame *f = &t->scopes[d];
			struct isc_event *e = f->recorded ? isc_vec_push(v) : NULL;
			if (e == NULL) {
				continue;
			}
			isc_scope_record(e, t, d, now, ISC_EVF_UNTERMINATED);
		}
	}
}

static int open_output(const char *tmp)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) {
		/* a temporary left by a killed process that had our pid */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	return fd < 0 ? -errno : fd;
}

/* Continuous mode: the trailer says what retention dropped. Appends the members
 * inside the object text of v. */
static bool add_retention(struct isc_vec *v)
{
	char members[512];
	size_t n = isc_recorder_trailer(members, sizeof(members));
	char *p = v->data;
	size_t end = v->len;
	while (end > 0 && p[end - 1] != '}') {
		end--;
	}
	if (end == 0 || !isc_vec_reserve(v, end + n)) {
		return false;
	}
	p = v->data;
	memcpy(p + end - 1, members, n);
	p[end - 1 + n] = '}';
	v->len = end + n;
	return true;
}

/* The spill to convert: the spill file, or in continuous mode the segments merged into
 * a temporary one (unlinked after). */
static int input_spill(char *merged)
{
	struct isc_session *s = &isc_session;
	merged[0] = '\0';
	if (!isc_config.continuous) {
		return open(s->spill.path, O_RDONLY | O_CLOEXEC);
	}
	isc_fmt(merged, PATH_MAX, "%s.merge-%d.spill", s->output, s->pid);
	int r = isc_recorder_merge(merged);
	int fd = r < 0 ? -1 : open(merged, O_RDONLY | O_CLOEXEC);
	if (r < 0) {
		unlink(merged);
		errno = -r;
	}
	return fd;
}

/* Spill (already synced) -> path, through a temporary file and rename(). */
static int write_trace_file(const char *path, const char *end_reason, const char *snapshot,
			    const struct isc_convert_opts *window, struct isc_convert_result *res)
{
	struct isc_session *s = &isc_session;
	struct isc_vec tmeta, tsys, extra;
	char tmp[PATH_MAX], merged[PATH_MAX];
	int r;

	uint64_t end_ns = isc_now();
	if (!isc_trailer_end(&tmeta, &tsys, end_ns, end_reason) ||
	    (isc_config.continuous && !add_retention(&tmeta))) {
		isc_vec_finish(&tmeta);
		isc_vec_finish(&tsys);
		return -ENOMEM;
	}
	open_scopes(&extra, end_ns);
	struct isc_convert_opts o = {
		.trailer_meta = tmeta.data,
		.trailer_meta_len = tmeta.len,
		.trailer_sysinfo = tsys.data,
		.trailer_sysinfo_len = tsys.len,
		.extra = extra.data,
		.n_extra = extra.len,
		.snapshot_reason = snapshot,
		.records_lost = isc_collector_spill_error() != 0,
		.resolve = isc_stacks_resolve, /* stack frames, symbolised while we can */
		.symbolize = isc_symbolize,    /* sampled stacks' native frames */
	};
	if (window) {
		o.window_from_ns = window->window_from_ns;
		o.window_until_ns = window->window_until_ns;
		o.window_corr_from = window->window_corr_from;
		o.window_corr_until = window->window_corr_until;
	}
	isc_fmt(tmp, sizeof(tmp), "%s.tmp-%d", path, s->pid);
	int in = input_spill(merged);
	int out = in < 0 ? -errno : open_output(tmp);
	if (in < 0) {
		r = -errno;
	} else if (out < 0) {
		r = out;
	} else {
		r = isc_trace_convert(in, out, &o, res);
		if (close(out) != 0 && r == 0) {
			r = -errno;
		}
		if (r == 0 && rename(tmp, path) != 0) {
			r = -errno;
		}
		if (r != 0) {
			unlink(tmp);
		}
	}
	if (in >= 0) {
		close(in);
	}
	if (merged[0]) {
		unlink(merged);
	}
	isc_vec_finish(&tmeta);
	isc_vec_finish(&tsys);
	isc_vec_finish(&extra);
	return r;
}

/* Continuous mode: the open segment is closed, the retained ones become the trace
 * <base>.<pid>.json; the segments stay (the analyzer and `inferscope watch` read them). */
static int finish_continuous(const char *end_reason)
{
	struct isc_convert_result res;
	isc_recorder_close();
	const char *path = isc_recorder_trace_path();
	int r = write_trace_file(path, end_reason, NULL, NULL, &res);
	if (r < 0) {
		write_lost_sidecar(path, r);
		isc_error("cannot write %s (%s); the segments beside it are kept: "
			  "inferscope-analyze reads them",
			  path, strerror(-r));
		return r;
	}
	isc_info("wrote %s (%llu events, %s, from the retained segments)", path,
		 (unsigned long long)res.events, end_reason);
	return 0;
}

int isc_session_write_window(const char *path, const struct isc_convert_opts *window,
			     struct isc_convert_result *res)
{
	if (isc_collector_spill(false) < 0) {
		return -EIO;
	}
	return write_trace_file(path, "snapshot", "capture", window, res);
}

/* No trace could be written: what it would have said about the records it lost goes
 * beside what is left, <stem>.lost.json for the spill file <stem>.spill that the
 * analyzer reads instead (it looks there), else <trace>.lost.json. */
static void write_lost_sidecar(const char *trace, int err)
{
	char path[PATH_MAX], body[PATH_MAX + 256];
	int spill_err = isc_collector_spill_error();
	uint64_t events = isc_collector_unspilled();
	const char *spill = isc_session.spill.path;
	size_t n = strlen(spill);
	if (!isc_config.continuous && n > 6 && strcmp(spill + n - 6, ".spill") == 0 &&
	    strncmp(spill, "/proc/", 6) != 0) {
		isc_fmt(path, sizeof(path), "%s", spill);
		isc_fmt(path + n - 6, sizeof(path) - (n - 6), ".lost.json");
	} else {
		isc_fmt(path, sizeof(path), "%s.lost.json", trace);
	}
	n = isc_fmt(body, sizeof(body),
		    "{\"unwritten\":{\"events\":%llu,\"reason\":\"%s\"},"
		    "\"trace_reason\":\"%s\"}\n",
		    (unsigned long long)events, isc_spill_err_reason(spill_err ? spill_err : err),
		    isc_spill_err_reason(err));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, body, n) != (ssize_t)n) {
		isc_error("cannot write %s either: %llu events lost uncounted in any file", path,
			  (unsigned long long)events);
	} else {
		isc_error("%llu events never reached a file (%s): counted in %s",
			  (unsigned long long)events,
			  isc_spill_err_reason(spill_err ? spill_err : err), path);
	}
	if (fd >= 0) {
		close(fd);
	}
}

int isc_session_finish(const char *end_reason)
{
	struct isc_session *s = &isc_session;
	struct isc_convert_result res;
	struct isc_spill *sp = isc_session_spill();

	int r = sp == NULL ? -EIO : isc_spill_sync(sp);
	if (r < 0) {
		isc_error("the trace of this process is lost: no spill could be written");
		write_lost_sidecar(
			isc_config.continuous ? isc_recorder_trace_path() : s->trace_path, r);
		return -EIO;
	}
	isc_spill_release(sp); /* the converter opens it again: one descriptor less at once */
	if (isc_config.continuous) {
		return finish_continuous(end_reason);
	}
	r = write_trace_file(s->trace_path, end_reason, NULL, NULL, &res);
	if (r < 0) {
		write_lost_sidecar(s->trace_path, r);
		isc_error("cannot write %s (%s); %s", s->trace_path, strerror(-r),
			  strncmp(s->spill.path, "/proc/", 6) != 0
				  ? "its spill file is kept: inferscope-analyze reads it"
				  : "the events are lost");
		if (strncmp(s->spill.path, "/proc/", 6) != 0) {
			isc_error("spill file: %s", s->spill.path);
		}
		return r;
	}
	isc_spill_close(sp);
	if (strncmp(s->spill.path, "/proc/", 6) != 0) {
		unlink(s->spill.path);
	}
	s->spill_open = false;
	isc_info("wrote %s (%llu events, %s)", s->trace_path, (unsigned long long)res.events,
		 end_reason);
	return 0;
}

void isc_session_snapshot(const char *reason)
{
	struct isc_session *s = &isc_session;
	struct isc_convert_result res;
	char path[PATH_MAX];

	if (isc_collector_spill(false) < 0) {
		isc_error("snapshot: the spill file cannot be written");
		return;
	}
	s->snapshot_seq++;
	size_t n = isc_session_stem_len(s->output);
	isc_fmt(path, sizeof(path), "%s", s->output);
	if (s->is_root && s->exec_seq == 0) {
		isc_fmt(path + n, sizeof(path) - n, ".snapshot-%u.json", s->snapshot_seq);
	} else {
		isc_fmt(path + n, sizeof(path) - n, ".%d.snapshot-%u.json", s->pid,
			s->snapshot_seq);
	}
	int r = write_trace_file(path, "snapshot", reason, NULL, &res);
	if (r < 0) {
		isc_error("cannot write snapshot %s (%s)", path, strerror(-r));
	} else {
		isc_info("wrote snapshot %s (%llu events)", path, (unsigned long long)res.events);
	}
}
