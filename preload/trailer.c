/* SPDX-License-Identifier: MIT */
/*
 * What a trace says about its process, written in one place: trace_metadata and
 * system_info members known at start (the spill's META and SYSINFO blocks), and those
 * only known at the end (the trailer: end time, dropped events, capture windows, what
 * the CUDA family and the samplers report, per-thread aggregates from the counters the
 * hooks keep in struct isc_thread). The hooks expose data; only this file writes JSON
 * about them. docs/trace-format.md documents every member.
 */
#include "preload/trailer.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "format/convert.h"
#include "format/spill.h"
#include "format/json-writer.h"
#include "format/vocab.h"
#include "isc-config.h"
#include "preload/core/buffer.h"
#include "preload/core/capture.h"
#include "preload/core/collector.h"
#include "preload/core/intern.h"
#include "preload/core/procfs.h"
#include "preload/hooks/cuda/cuda-family.h"
#include "preload/hooks/host/host.h"
#include "preload/samplers/cpu-sampler.h"
#include "preload/samplers/samplers.h"
#include "preload/session.h"

/* What the end of a trace is written from: taken once per trace. */
struct end {
	uint64_t ns;
	const char *reason;
	bool have_cuda; /* false when built without CUDA */
	struct isc_cuda_report cuda;
};

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

static void meta_json(struct isc_json *j, const struct end *e)
{
	(void)e;
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

static void sysinfo_json(struct isc_json *j, const struct end *e)
{
	(void)e;
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

/* Renders fn's JSON into v (initialised by the caller); false on failure. */
static bool render(struct isc_vec *v, void (*fn)(struct isc_json *, const struct end *),
		   const struct end *e)
{
	char buf[4096];
	struct isc_json j;
	isc_json_init(&j, buf, sizeof(buf), sink_vec, v);
	fn(&j, e);
	return isc_json_flush(&j) == 0;
}

/* ---- what the families report ---- */

static void json_version(struct isc_json *j, const char *key, int v)
{
	char buf[32];
	if (v > 0) {
		isc_fmt(buf, sizeof(buf), "%d.%d", v / 1000, v % 1000 / 10);
		isc_json_kv_string(j, key, buf);
	}
}

static const char *device_name(const struct isc_gpu_device *d)
{
	const char *name = isc_intern_get(d->name, NULL);
	return name ? name : "";
}

static void json_device(struct isc_json *j, const struct isc_gpu_device *d)
{
	char cc[16];
	uint32_t ws = d->warp_size ? d->warp_size : 32;
	isc_fmt(cc, sizeof(cc), "%u.%u", d->cc_major, d->cc_minor);
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "id", d->id);
	isc_json_kv_string(j, "name", device_name(d));
	isc_json_kv_uint(j, "sm_count", d->sm_count);
	isc_json_kv_string(j, "compute_capability", cc);
	isc_json_kv_uint(j, "max_threads_per_sm", (uint64_t)d->max_warps_per_sm * ws);
	isc_json_kv_uint(j, "max_blocks_per_sm", d->max_blocks_per_sm);
	isc_json_kv_uint(j, "max_registers_per_sm", d->max_registers_per_sm);
	isc_json_kv_uint(j, "max_shared_memory_per_sm", d->max_shared_per_sm);
	isc_json_kv_uint(j, "registers_per_block", d->registers_per_block);
	isc_json_kv_uint(j, "shared_memory_per_block", d->shared_per_block);
	isc_json_kv_uint(j, "warp_size", ws);
	isc_json_kv_uint(j, "global_memory_bytes", d->global_memory);
	isc_json_end_object(j);
}

/* trace_metadata.cuda (only when the process used CUDA: a program with the runtime
 * linked statically - nvcc's default - is seen by CUPTI only) and gpu_model. */
static void json_cuda(struct isc_json *j, const struct isc_cuda_report *r)
{
	if (!r->used) {
		return;
	}
	isc_json_key(j, "cuda");
	isc_json_begin_object(j);
	json_version(j, "runtime_version", r->runtime_version);
	json_version(j, "driver_version", r->driver_version);
	isc_json_key(j, "devices");
	isc_json_begin_array(j);
	for (unsigned i = 0; i < r->n_devices; i++) {
		json_device(j, &r->devices[i]);
	}
	isc_json_end_array(j);
	isc_json_end_object(j);
	for (unsigned i = 0; i < r->n_devices; i++) {
		if (isc_intern_get(r->devices[i].name, NULL)) {
			isc_json_kv_string(j, "gpu_model", device_name(&r->devices[i]));
			break;
		}
	}
}

static void json_cupti(struct isc_json *j, const struct isc_cupti_report *c)
{
	isc_json_key(j, "cupti");
	isc_json_begin_object(j);
	isc_json_kv_string(j, "status", c->status);
	if (c->reason) {
		isc_json_kv_string(j, "reason", c->reason);
	}
	if (c->library[0]) {
		isc_json_kv_string(j, "library", c->library);
	}
	if (c->version) {
		isc_json_kv_uint(j, "version", c->version);
	}
	if (c->refused) {
		isc_json_kv_string(j, "holder", c->holder);
	}
	if (c->active) {
		isc_json_kv_string(j, "started_by", c->started_by);
		isc_json_kv_string(j, "timestamp_source",
				   c->ts_callback ? "callback" : "calibrated");
		isc_json_kv_uint(j, "dropped_records", c->dropped);
		isc_json_kv_uint(j, "buffers", c->buffers);
		isc_json_kv_uint(j, "buffers_refused", c->buffers_refused);
		isc_json_kv_uint(j, "records", c->records);
		isc_json_kv_uint(j, "unresolved_records", c->unresolved);
		isc_json_key(j, "overhead_us");
		isc_json_ns_as_us(j, (int64_t)c->overhead_ns);
		isc_json_key(j, "graph_nodes");
		isc_json_begin_object(j);
		isc_json_kv_string(j, "status", c->graph_nodes ? c->graph_nodes : "off");
		if (c->graph_nodes_reason) {
			isc_json_kv_string(j, "reason", c->graph_nodes_reason);
		}
		isc_json_kv_uint(j, "created", c->graph_nodes_created);
		isc_json_kv_uint(j, "cloned", c->graph_nodes_cloned);
		isc_json_kv_uint(j, "without_id", c->graph_nodes_no_id);
		isc_json_end_object(j);
	}
	isc_json_end_object(j);
}

static void json_numa(struct isc_json *j)
{
	struct isc_numa_report r;
	if (!isc_numa_report(&r)) {
		return;
	}
	isc_json_key(j, "numa");
	isc_json_begin_object(j);
	if (r.have_task) {
		isc_json_kv_uint(j, "pages_migrated_start", r.task_start);
		isc_json_kv_uint(j, "pages_migrated_end", r.task_end);
	}
	if (r.have_system) {
		isc_json_kv_uint(j, "system_pages_migrated", r.system);
	}
	if (r.start_node >= 0) {
		isc_json_kv_int(j, "node_at_start", r.start_node);
	}
	isc_json_end_object(j);
}

static void json_heap(struct isc_json *j)
{
	struct isc_heap_report r;
	if (!isc_heap_report(&r)) {
		return;
	}
	isc_json_key(j, "heap");
	isc_json_begin_object(j);
	isc_json_kv_int(j, "live_bytes_at_end", r.live_at_end);
	isc_json_kv_int(j, "peak_live_bytes_sampled", r.peak_sampled);
	isc_json_kv_uint(j, "sample_mean_bytes", isc_config.malloc_sample);
	isc_json_kv_uint(j, "threshold_bytes", isc_config.malloc_threshold);
	isc_json_end_object(j);
}

static void json_sampling(struct isc_json *j)
{
	struct isc_sampling_report r;
	if (!isc_sampling_report(&r)) {
		return;
	}
	isc_json_key(j, "sampling");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "cpu_hz", r.cpu_hz);
	isc_json_kv_int(j, "signal", r.signal);
	isc_json_kv_string(j, "python", r.python);
	isc_json_kv_uint(j, "samples", r.samples);
	isc_json_kv_uint(j, "lost", r.lost);
	isc_json_kv_string(j, "unwinder", r.unwinder);
	isc_json_kv_uint(j, "unwind_fallbacks", r.unwind_fallbacks);
	isc_json_kv_bool(j, "stepped_aside", r.stepped_aside);
	isc_json_kv_uint(j, "timer_failures", r.timer_failures);
	isc_json_kv_uint(j, "unsampled_threads", r.unsampled_threads);
	if (r.unsampled_threads > 0) {
		isc_json_kv_string(j, "unsampled_reason", "signal_blocked");
	}
	isc_json_key(j, "handler_us");
	isc_json_ns_as_us(j, (int64_t)r.handler_ns);
	isc_json_key(j, "python_walk_us");
	isc_json_ns_as_us(j, (int64_t)r.python_ns);
	isc_json_key(j, "handler_median_us");
	isc_json_ns_as_us(j, (int64_t)r.handler_median_ns);
	isc_json_key(j, "python_walk_median_us");
	isc_json_ns_as_us(j, (int64_t)r.python_median_ns);
	isc_json_kv_uint(j, "cpu_clock_reads", r.clock_reads);
	isc_json_kv_uint(j, "python_reads", r.python_reads);
	isc_json_end_object(j);
}

/* ---- per-thread aggregates: exact counters the hooks keep in struct isc_thread ---- */

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

static void json_capture(struct isc_json *j, uint64_t end_ns)
{
	uint64_t w[64][2];
	size_t n = isc_capture_windows(w, 64, end_ns);
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

/* Records that never reached the spill (a full disk, a file-size limit, no descriptor,
 * no memory: they waited in memory and the last try failed too), and why. */
static void json_unwritten(struct isc_json *j)
{
	int err = isc_collector_spill_error();
	if (err == 0) {
		return;
	}
	isc_json_key(j, ISC_KEY_UNWRITTEN);
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "events", isc_collector_unspilled());
	isc_json_kv_string(j, "reason", isc_spill_err_reason(err));
	isc_json_end_object(j);
}

static void trailer_meta_json(struct isc_json *j, const struct end *e)
{
	struct isc_session *s = &isc_session;
	isc_json_begin_object(j);
	isc_json_key(j, "end_us");
	isc_json_ns_as_us(j, (int64_t)e->ns);
	isc_json_kv_double(j, "duration_ms", (double)(e->ns - s->start_ns) / 1e6, 6);
	isc_json_kv_string(j, "end_reason", e->reason);
	json_dropped(j);
	json_unwritten(j);
	json_capture(j, e->ns);
	isc_json_kv_uint(j, "string_table_overflows", isc_intern_overflows());
	isc_json_kv_uint(j, "collector_wakeups", isc_collector_wakeups());
	json_python_version(j);
	if (e->have_cuda) {
		json_cuda(j, &e->cuda);
		json_cupti(j, &e->cuda.cupti);
	}
	json_numa(j);
	json_heap(j);
	json_sampling(j);
	isc_trailer_threads(j, e->have_cuda ? &e->cuda : NULL);
	isc_json_end_object(j);
}

static void trailer_sysinfo_json(struct isc_json *j, const struct end *e)
{
	isc_json_begin_object(j);
	if (e->have_cuda && e->cuda.n_devices > 0) {
		isc_json_kv_uint(j, "gpu_count", e->cuda.n_devices);
	}
	isc_json_end_object(j);
}

/* An image that execs: who it was, when, and what it lost (an exec_chain entry). */
static void segment_json(struct isc_json *j, const struct end *e)
{
	struct isc_session *s = &isc_session;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	isc_json_begin_object(j);
	isc_json_kv_uint(j, "segment", s->segment);
	isc_json_kv_int(j, "pid", s->pid);
	json_command_line(j);
	isc_json_key(j, "executable");
	isc_json_string_n(j, exe, n > 0 ? (size_t)n : 0);
	isc_json_key(j, "start_us");
	isc_json_ns_as_us(j, (int64_t)s->start_ns);
	isc_json_key(j, "end_us");
	isc_json_ns_as_us(j, (int64_t)e->ns);
	isc_json_kv_string(j, "end_reason", e->reason);
	json_dropped(j);
	isc_json_end_object(j);
}

/* ---- entry points ---- */

bool isc_trailer_segment(struct isc_vec *v, uint64_t end_ns)
{
	struct end e = { .ns = end_ns, .reason = "exec" };
	isc_vec_init(v, 1);
	return render(v, segment_json, &e);
}

bool isc_trailer_start(struct isc_vec *meta, struct isc_vec *sysinfo)
{
	isc_vec_init(meta, 1);
	isc_vec_init(sysinfo, 1);
	return render(meta, meta_json, NULL) && render(sysinfo, sysinfo_json, NULL);
}

bool isc_trailer_end(struct isc_vec *meta, struct isc_vec *sysinfo, uint64_t end_ns,
		     const char *end_reason)
{
	static struct end e; /* one writer at a time (the flush or a snapshot); 4 KiB */
	isc_vec_init(meta, 1);
	isc_vec_init(sysinfo, 1);
	e.ns = end_ns;
	e.reason = end_reason;
	e.have_cuda = isc_cuda_report(&e.cuda);
	return render(meta, trailer_meta_json, &e) && render(sysinfo, trailer_sysinfo_json, &e);
}
