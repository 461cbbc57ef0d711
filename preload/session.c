/* SPDX-License-Identifier: MIT */
#include "session.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "buffer.h"
#include "capture.h"
#include "collector.h"
#include "clock.h"
#include "config.h"
#include "host.h"
#include "intern.h"
#include "isc-config.h"
#include "log.h"
#include "procfs.h"
#include "samplers.h"
#include "scope.h"
#include "scratch.h"
#include "trace-writer.h"

struct isc_session isc_session;

#define MAX_CONTRIB 8
static isc_trailer_fn meta_fns[MAX_CONTRIB], sysinfo_fns[MAX_CONTRIB];
static isc_thread_agg_fn thread_fns[MAX_CONTRIB];
static unsigned n_meta, n_sysinfo, n_thread;
static char exec_env[64];

void isc_session_add_metadata(isc_trailer_fn fn)
{
	if (n_meta < MAX_CONTRIB) {
		meta_fns[n_meta++] = fn;
	}
}

void isc_session_add_sysinfo(isc_trailer_fn fn)
{
	if (n_sysinfo < MAX_CONTRIB) {
		sysinfo_fns[n_sysinfo++] = fn;
	}
}

void isc_session_add_thread_aggregate(isc_thread_agg_fn fn)
{
	if (n_thread < MAX_CONTRIB) {
		thread_fns[n_thread++] = fn;
	}
}

/* ---- paths ---- */

static size_t stem_len(const char *path)
{
	size_t n = strlen(path);
	return (n > 5 && strcmp(path + n - 5, ".json") == 0) ? n - 5 : n;
}

/* <stem>.<pid>[.<seq>]<suffix> */
static void derived_path(char *out, const char *output, const char *suffix)
{
	struct isc_session *s = &isc_session;
	size_t n = stem_len(output);
	char seq[16] = "";
	if (s->exec_seq > 0) {
		isc_fmt(seq, sizeof(seq), ".%u", s->exec_seq);
	}
	isc_fmt(out, PATH_MAX, "%s", output);
	isc_fmt(out + n, PATH_MAX - n, ".%d%s%s", s->pid, seq, suffix);
}

static bool dir_writable(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (n == 0) {
		strcpy(dir, "/");
	}
	return access(dir, W_OK | X_OK) == 0;
}

static void resolve_output(void)
{
	struct isc_session *s = &isc_session;
	char cwd[PATH_MAX], dir[PATH_MAX];
	const char *out = isc_config.output;

	if (out[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL) {
		isc_fmt(s->output, sizeof(s->output), "%s/%s", cwd, out);
	} else {
		isc_fmt(s->output, sizeof(s->output), "%s", out);
	}
	if (!dir_writable(s->output, dir)) {
		int e = errno;
		const char *tmp = getenv("TMPDIR");
		const char *base = strrchr(s->output, '/');
		char fallback[PATH_MAX];
		isc_fmt(fallback, sizeof(fallback), "%s/%s", tmp && tmp[0] == '/' ? tmp : "/tmp",
			base ? base + 1 : s->output);
		/* Only the process the user started says it: children would repeat it. */
		if (s->is_root && s->exec_seq == 0) {
			isc_error("cannot write to %s (%s); the trace goes to %s instead", dir,
				  strerror(e), fallback);
		}
		memcpy(s->output, fallback, sizeof(fallback));
	}
}

static void make_paths(void)
{
	struct isc_session *s = &isc_session;
	if (s->is_root && s->exec_seq == 0) {
		isc_fmt(s->trace_path, sizeof(s->trace_path), "%s", s->output);
	} else {
		derived_path(s->trace_path, s->output,
			     s->output[stem_len(s->output)] ? ".json" : "");
	}
	derived_path(s->spill_path, s->output, ".spill");
}

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
	/* "<pid>:<n>": set by our exec hook for the image that replaces us */
	const char *seq = getenv("INFERSCOPE_EXEC_SEQ");
	char *colon;
	if (seq && strtol(seq, &colon, 10) == s->pid && *colon == ':') {
		s->exec_seq = (unsigned)strtoul(colon + 1, NULL, 10);
	}
	resolve_output();
	make_paths();
}

void isc_session_reset_after_fork(void)
{
	struct isc_session *s = &isc_session;
	isc_spill_close(&s->spill);
	s->spill_open = false;
	s->spill_failed = false;
	s->pid = getpid();
	s->ppid = getppid();
	s->is_root = false;
	s->exec_seq = 0;
	s->snapshot_seq = 0;
	s->start_ns = isc_now();
	make_paths();
}

void isc_session_after_failed_exec(void)
{
	struct isc_session *s = &isc_session;
	s->exec_seq++;
	s->spill_open = false;
	s->spill_failed = false;
	make_paths();
}

const char *isc_session_exec_env(void)
{
	isc_fmt(exec_env, sizeof(exec_env), "INFERSCOPE_EXEC_SEQ=%d:%u", isc_session.pid,
		isc_session.exec_seq + 1);
	return exec_env;
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
	uint64_t ns = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
		      ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
	return ns >= WORK_CPU_NS;
}

/* ---- metadata ---- */

static int sink_vec(void *ctx, const char *buf, size_t len)
{
	struct isc_vec *v = ctx;
	if (!isc_vec_reserve(v, v->len + len)) {
		return -ENOMEM;
	}
	memcpy((char *)v->data + v->len, buf, len);
	v->len += len;
	return 0;
}

static void json_command_line(struct isc_json *j)
{
	static char buf[65536];
	size_t n = isc_slurp("/proc/self/cmdline", buf, sizeof(buf));
	isc_json_key(j, "command_line");
	isc_json_begin_array(j);
	for (size_t i = 0; i < n;) {
		size_t len = strnlen(buf + i, n - i);
		isc_json_string_n(j, buf + i, len);
		i += len + 1;
	}
	isc_json_end_array(j);
}

static void json_clock(struct isc_json *j)
{
	struct isc_session *s = &isc_session;
	char when[40];
	isc_format_utc(when, s->anchor_real_ns);
	isc_json_key(j, "clock");
	isc_json_begin_object(j);
	isc_json_kv_string(j, "domain", "CLOCK_MONOTONIC");
	isc_json_kv_string(j, "unit", "us");
	isc_json_key(j, "anchor_monotonic_us");
	isc_json_ns_as_us(j, (int64_t)s->anchor_mono_ns);
	isc_json_key(j, "anchor_realtime_us");
	isc_json_ns_as_us(j, (int64_t)s->anchor_real_ns);
	isc_json_kv_string(j, "anchor_realtime", when);
	isc_json_end_object(j);
}

static void json_configuration(struct isc_json *j)
{
	const struct isc_cfg_entry *t = isc_config_table();
	isc_json_key(j, "configuration");
	isc_json_begin_object(j);
	for (size_t i = 0; t[i].name; i++) {
		isc_json_kv_string(j, t[i].name, isc_config_effective(i));
	}
	isc_json_end_object(j);
}

static void meta_json(struct isc_json *j)
{
	struct isc_session *s = &isc_session;
	struct utsname u;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	isc_json_begin_object(j);
	isc_json_kv_int(j, "pid", s->pid);
	isc_json_kv_int(j, "ppid", s->ppid);
	isc_json_kv_int(j, "root_pid", s->root_pid);
	isc_json_kv_uint(j, "exec_seq", s->exec_seq);
	json_command_line(j);
	isc_json_key(j, "executable");
	isc_json_string_n(j, exe, n > 0 ? (size_t)n : 0);
	isc_json_kv_string(j, "hostname", uname(&u) == 0 ? u.nodename : "");
	isc_json_kv_string(j, "inferscope_version", ISC_VERSION);
	json_clock(j);
	isc_json_key(j, "start_us");
	isc_json_ns_as_us(j, (int64_t)s->start_ns);
	json_configuration(j);
	isc_json_end_object(j);
}

static unsigned count_numa_nodes(void)
{
	char path[64];
	unsigned n = 0;
	for (unsigned i = 0; i < 1024; i++) {
		isc_fmt(path, sizeof(path), "/sys/devices/system/node/node%u", i);
		if (access(path, F_OK) != 0) {
			break;
		}
		n++;
	}
	return n ? n : 1;
}

static void json_cpu_model(struct isc_json *j)
{
	static char buf[16384];
	isc_slurp("/proc/cpuinfo", buf, sizeof(buf));
	const char *m = strstr(buf, "model name");
	const char *colon = m ? strchr(m, ':') : NULL;
	isc_json_key(j, "cpu_model");
	if (colon == NULL) {
		isc_json_string(j, "unknown");
		return;
	}
	colon++;
	while (*colon == ' ' || *colon == '\t') {
		colon++;
	}
	isc_json_string_n(j, colon, strcspn(colon, "\n"));
}

static void sysinfo_json(struct isc_json *j)
{
	struct utsname u;
	struct sysinfo si;
	isc_json_begin_object(j);
	isc_json_kv_int(j, "cpu_count", sysconf(_SC_NPROCESSORS_ONLN));
	json_cpu_model(j);
	isc_json_kv_uint(j, "numa_nodes", count_numa_nodes());
	if (sysinfo(&si) == 0) {
		isc_json_kv_double(j, "ram_gb", (double)si.totalram * si.mem_unit / (1u << 30), 2);
	}
	isc_json_kv_string(j, "kernel", uname(&u) == 0 ? u.release : "");
	isc_json_kv_int(j, "page_size", sysconf(_SC_PAGESIZE));
	isc_json_end_object(j);
}

/* Renders fn's JSON into v; false on failure. */
static bool render(struct isc_vec *v, void (*fn)(struct isc_json *))
{
	char buf[4096];
	struct isc_json j;
	isc_vec_init(v, 1);
	isc_json_init(&j, buf, sizeof(buf), sink_vec, v);
	fn(&j);
	return isc_json_flush(&j) == 0;
}

struct isc_spill *isc_session_spill(void)
{
	struct isc_session *s = &isc_session;
	if (s->spill_open) {
		return &s->spill;
	}
	if (s->spill_failed) {
		return NULL;
	}
	int r = isc_spill_create(&s->spill, s->spill_path, (uint64_t)s->pid, s->start_ns);
	if (r < 0) {
		isc_error("cannot create %s (%s): keeping the spill in memory", s->spill_path,
			  strerror(-r));
		r = isc_spill_create_memfd(&s->spill, (uint64_t)s->pid, s->start_ns);
	}
	if (r < 0) {
		s->spill_failed = true;
		isc_error("cannot keep a spill in memory either (%s): events are lost",
			  strerror(-r));
		return NULL;
	}
	struct isc_vec meta, sysinfo;
	if (render(&meta, meta_json) && render(&sysinfo, sysinfo_json)) {
		isc_spill_queue(&s->spill, ISC_BLK_META, meta.data, meta.len, NULL, 0);
		isc_spill_queue(&s->spill, ISC_BLK_SYSINFO, sysinfo.data, sysinfo.len, NULL, 0);
		isc_spill_sync(&s->spill);
	}
	isc_vec_finish(&meta);
	isc_vec_finish(&sysinfo);
	s->spill_open = true;
	return &s->spill;
}

/* ---- the trailer: what is only known at the end ---- */

static const char *g_end_reason;
static uint64_t g_end_ns;

static void json_dropped(struct isc_json *j)
{
	uint64_t by_kind[ISC_EV__COUNT] = { 0 }, total = 0;
	char key[16];

	isc_json_key(j, "dropped_events");
	isc_json_begin_object(j);
	isc_json_key(j, "by_thread");
	isc_json_begin_object(j);
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		uint64_t mine = 0;
		for (unsigned k = 0; k < ISC_EV__COUNT; k++) {
			by_kind[k] += t->dropped[k];
			mine += t->dropped[k];
		}
		if (mine > 0) {
			isc_fmt(key, sizeof(key), "%u", t->tid);
			isc_json_kv_uint(j, key, mine);
		}
		total += mine;
	}
	isc_json_end_object(j);
	for (unsigned k = 0; k < ISC_EV__COUNT; k++) {
		by_kind[k] += isc_buffer_orphan_drops(k);
		total += isc_buffer_orphan_drops(k);
	}
	isc_json_key(j, "by_kind");
	isc_json_begin_object(j);
	/* several record kinds share a trace type: add them up under one key */
	for (unsigned k = 0; k < ISC_EV__COUNT; k++) {
		const char *name = isc_event_kind_name(k);
		uint64_t sum = 0;
		bool first = true;
		for (unsigned m = 0; m < ISC_EV__COUNT; m++) {
			if (strcmp(isc_event_kind_name(m), name) == 0) {
				first = first && m >= k;
				sum += by_kind[m];
			}
		}
		if (first && sum > 0) {
			isc_json_kv_uint(j, name, sum);
		}
	}
	isc_json_end_object(j);
	isc_json_kv_uint(j, "total", total);
	isc_json_end_object(j);
}

static void json_capture(struct isc_json *j)
{
	uint64_t w[64][2];
	size_t n = isc_capture_windows(w, 64, g_end_ns);
	isc_json_key(j, "capture");
	isc_json_begin_object(j);
	isc_json_key(j, "windows");
	isc_json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		isc_json_begin_array(j);
		isc_json_ns_as_us(j, (int64_t)w[i][0]);
		isc_json_ns_as_us(j, (int64_t)w[i][1]);
		isc_json_end_array(j);
	}
	isc_json_end_array(j);
	isc_json_end_object(j);
}

static void json_aggregates(struct isc_json *j)
{
	isc_json_key(j, "aggregates");
	isc_json_begin_object(j);
	isc_json_key(j, "threads");
	isc_json_begin_array(j);
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		isc_json_begin_object(j);
		isc_json_kv_uint(j, "thread_id", t->tid);
		isc_json_kv_string(j, "name", t->comm);
		isc_json_kv_uint(j, "events", t->recorded);
		for (unsigned i = 0; i < n_thread; i++) {
			thread_fns[i](j, t);
		}
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	isc_json_end_object(j);
}

static void json_python_version(struct isc_json *j)
{
	/* Present when the process is a Python interpreter (or embeds one). */
	const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
	if (version) {
		const char *v = version();
		isc_json_key(j, "python_version");
		isc_json_string_n(j, v, strcspn(v, " "));
	}
}

static void trailer_meta_json(struct isc_json *j)
{
	struct isc_session *s = &isc_session;
	isc_json_begin_object(j);
	isc_json_key(j, "end_us");
	isc_json_ns_as_us(j, (int64_t)g_end_ns);
	isc_json_kv_double(j, "duration_ms", (double)(g_end_ns - s->start_ns) / 1e6, 6);
	isc_json_kv_string(j, "end_reason", g_end_reason);
	json_dropped(j);
	json_capture(j);
	isc_json_kv_uint(j, "string_table_overflows", isc_intern_overflows());
	json_python_version(j);
	for (unsigned i = 0; i < n_meta; i++) {
		meta_fns[i](j);
	}
	json_aggregates(j);
	isc_json_end_object(j);
}

static void trailer_sysinfo_json(struct isc_json *j)
{
	isc_json_begin_object(j);
	for (unsigned i = 0; i < n_sysinfo; i++) {
		sysinfo_fns[i](j);
	}
	isc_json_end_object(j);
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

/* Spill (already synced) -> path, through a temporary file and rename(). */
static int write_trace_file(const char *path, const char *end_reason, const char *snapshot,
			    struct isc_convert_result *res)
{
	struct isc_session *s = &isc_session;
	struct isc_vec tmeta, tsys, extra;
	char tmp[PATH_MAX];
	int r;

	g_end_ns = isc_now();
	g_end_reason = end_reason;
	if (!render(&tmeta, trailer_meta_json) || !render(&tsys, trailer_sysinfo_json)) {
		isc_vec_finish(&tmeta);
		return -ENOMEM;
	}
	open_scopes(&extra, g_end_ns);
	struct isc_convert_opts o = {
		.trailer_meta = tmeta.data,
		.trailer_meta_len = tmeta.len,
		.trailer_sysinfo = tsys.data,
		.trailer_sysinfo_len = tsys.len,
		.extra = extra.data,
		.n_extra = extra.len,
		.snapshot_reason = snapshot,
		.resolve = isc_stacks_resolve, /* stack frames, symbolised while we can */
		.symbolize = isc_symbolize,    /* sampled stacks' native frames */
	};
	isc_fmt(tmp, sizeof(tmp), "%s.tmp-%d", path, s->pid);
	int in = open(s->spill.path, O_RDONLY | O_CLOEXEC);
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
	isc_vec_finish(&tmeta);
	isc_vec_finish(&tsys);
	isc_vec_finish(&extra);
	return r;
}

int isc_session_finish(const char *end_reason)
{
	struct isc_session *s = &isc_session;
	struct isc_convert_result res;
	struct isc_spill *sp = isc_session_spill();

	if (sp == NULL || isc_spill_sync(sp) < 0) {
		isc_error("the trace of this process is lost: no spill could be written");
		return -EIO;
	}
	int r = write_trace_file(s->trace_path, end_reason, NULL, &res);
	if (r < 0) {
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
	size_t n = stem_len(s->output);
	isc_fmt(path, sizeof(path), "%s", s->output);
	if (s->is_root && s->exec_seq == 0) {
		isc_fmt(path + n, sizeof(path) - n, ".snapshot-%u.json", s->snapshot_seq);
	} else {
		isc_fmt(path + n, sizeof(path) - n, ".%d.snapshot-%u.json", s->pid,
			s->snapshot_seq);
	}
	int r = write_trace_file(path, "snapshot", reason, &res);
	if (r < 0) {
		isc_error("cannot write snapshot %s (%s)", path, strerror(-r));
	} else {
		isc_info("wrote snapshot %s (%llu events)", path, (unsigned long long)res.events);
	}
}
