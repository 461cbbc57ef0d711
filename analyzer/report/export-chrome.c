/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace JSON in the shape the PyTorch profiler (Kineto) writes, so that Perfetto
 * opens it and Kineto-trace tools (HTA) read it: complete events with Kineto's categories,
 * GPU work on pid = device and tid = stream, args.correlation on both sides, and ac2g flow
 * events from each launching call to the first GPU operation it caused (one per call: the
 * nodes of a CUDA graph share their launch's id). What HTA reads beside the events is kept
 * from a Kineto input: kernel geometry (grid, block, registers, shared memory), GPU-side
 * annotations (gpu_user_annotation), "distributedInfo" and "deviceProperties". CPU
 * samples are the format's "samples" with their "stackFrames" (export-chrome-samples.c),
 * and each thread's CPU-time and wait-time counters are a track of their own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/report/report.h"
#include "format/json-writer.h"
#include "analyzer/model/model-extra.h"

static const char *category(unsigned type)
{
	switch (type) {
	case ISC_T_SCOPE:
		return "user_annotation";
	case ISC_T_CPU_OP:
		return "cpu_op";
	case ISC_T_SYSCALL:
		return "syscall";
	case ISC_T_MEMORY:
		return "memory";
	case ISC_T_CUDA_API:
		return "cuda_runtime";
	case ISC_T_KERNEL:
		return "kernel";
	case ISC_T_H2D:
	case ISC_T_D2H:
	case ISC_T_D2D:
	case ISC_T_H2H:
		return "gpu_memcpy";
	case ISC_T_MEMSET:
		return "gpu_memset";
	case ISC_T_GPU_SYNC:
		return "cuda_sync";
	default:
		return "instant";
	}
}

/* Kineto spells the copy kind in the name ("Memcpy HtoD (Pageable -> Device)"). */
static const char *copy_name(const struct isc_ev *e, const char *name)
{
	if (strstr(name, "Memcpy") != NULL) {
		return name;
	}
	bool pg = e->flags & ISC_F_PAGEABLE, pin = e->flags & ISC_F_PINNED;
	switch (e->type) {
	case ISC_T_H2D:
		return pg    ? "Memcpy HtoD (Pageable -> Device)"
		       : pin ? "Memcpy HtoD (Pinned -> Device)"
			     : "Memcpy HtoD";
	case ISC_T_D2H:
		return pg    ? "Memcpy DtoH (Device -> Pageable)"
		       : pin ? "Memcpy DtoH (Device -> Pinned)"
			     : "Memcpy DtoH";
	case ISC_T_H2H:
		return "Memcpy HtoH";
	default:
		return "Memcpy DtoD (Device -> Device)";
	}
}

static int64_t pid_of(const struct isc_trace *t, uint16_t input)
{
	int64_t pid = t->inputs[input].pid;
	return pid != 0 ? pid : (int64_t)input + 1;
}

/* A stream id as the input wrote it: Kineto's unsigned 4294967295 (read into the model's
 * int32 as -1) stays a stream for HTA, only a record on no stream is -1. */
static int64_t stream_id(const struct isc_ev *e)
{
	return e->stream < 0 && !(e->flags & ISC_F_NO_STREAM) ? (int64_t)(uint32_t)e->stream
							      : e->stream;
}

static void where(struct isc_json *j, const struct isc_trace *t, const struct isc_ev *e)
{
	if (isc_type_is_gpu(e->type)) {
		isc_json_kv_int(j, "pid", e->device >= 0 ? e->device : 0);
		isc_json_kv_int(j, "tid", stream_id(e));
	} else {
		isc_json_kv_int(j, "pid", pid_of(t, e->input));
		isc_json_kv_int(j, "tid", e->thread < t->n_threads ? t->threads[e->thread].tid : 0);
	}
}

static void dims(struct isc_json *j, const char *key, const int32_t *v)
{
	if (v[0] <= 0) {
		return;
	}
	isc_json_key(j, key);
	isc_json_begin_array(j);
	for (int k = 0; k < 3; k++) {
		isc_json_int(j, v[k]);
	}
	isc_json_end_array(j);
}

static void geometry(struct isc_json *j, const struct isc_trace *t, const struct isc_ev *e)
{
	const struct isc_kernel_geom *g = isc_trace_geom_of(t, e);
	if (g == NULL) {
		return;
	}
	dims(j, "grid", g->grid);
	dims(j, "block", g->block);
	if (g->regs >= 0) {
		isc_json_kv_int(j, "registers per thread", g->regs);
	}
	if (g->smem >= 0) {
		isc_json_kv_int(j, "shared memory", g->smem);
	}
}

static void args(struct isc_json *j, const struct isc_trace *t, const struct isc_ev *e)
{
	isc_json_key(j, "args");
	isc_json_begin_object(j);
	if (e->corr != 0 && (e->type == ISC_T_CUDA_API || isc_type_is_gpu(e->type))) {
		isc_json_kv_uint(j, "correlation", e->corr);
		isc_json_kv_uint(j, "External id", e->corr);
	}
	if (isc_type_is_gpu(e->type)) {
		isc_json_kv_int(j, "device", e->device);
		isc_json_kv_int(j, "stream", stream_id(e));
	}
	if (e->type == ISC_T_GPU_SYNC && e->sub != ISC_GS_OTHER) {
		/* a wait on an event, in Kineto's words: HTA pairs the export's as the input's */
		isc_json_kv_int(j, "wait_on_stream", e->v.sync.wait_stream);
		isc_json_kv_int(j, "wait_on_cuda_event_record_corr_id",
				e->v.sync.record_corr != 0 ? (int64_t)e->v.sync.record_corr : -1);
	} else if (e->type != ISC_T_COUNTER && e->v.bytes != 0 && e->type != ISC_T_KERNEL) {
		isc_json_kv_uint(j, "bytes", e->v.bytes);
	}
	if (e->type == ISC_T_KERNEL && e->occupancy >= 0) {
		isc_json_kv_double(j, "est. achieved occupancy %", e->occupancy * 100.0, 2);
	}
	if (e->type == ISC_T_KERNEL) {
		geometry(j, t, e);
	}
	isc_json_end_object(j);
}

/* A viewer keys a counter's track by process and name: a per-thread counter (CPU time,
 * wait time) names its thread, so that each thread has its own track. */
static void counter(struct isc_json *j, const struct isc_trace *t, const struct isc_ev *e,
		    const char *name)
{
	char series[256];
	const struct isc_thread_info *th = e->thread < t->n_threads ? &t->threads[e->thread] : NULL;
	if (th != NULL && th->tid != 0) {
		const char *tname = th->name != 0 ? isc_trace_str(t, th->name) : "";
		snprintf(series, sizeof(series), "%s %s%stid %lld", name, tname, *tname ? " " : "",
			 (long long)th->tid);
		name = series;
	}
	isc_json_kv_string(j, "ph", "C");
	isc_json_kv_string(j, "name", name);
	isc_json_kv_int(j, "pid", pid_of(t, e->input));
	if (th != NULL && th->tid != 0) {
		isc_json_kv_int(j, "tid", th->tid);
	}
	isc_json_key(j, "ts");
	isc_json_ns_as_us(j, e->ts);
	isc_json_key(j, "args");
	isc_json_begin_object(j);
	isc_json_kv_double(j, "value", e->v.value, 3); /* a key is written raw */
	isc_json_end_object(j);
}

static void event(struct isc_json *j, const struct isc_trace *t, const struct isc_ev *e)
{
	const char *name = isc_trace_str(t, e->name);
	isc_json_begin_object(j);
	if (e->type == ISC_T_COUNTER) {
		counter(j, t, e, name);
		isc_json_end_object(j);
		return;
	}
	bool instant = e->type == ISC_T_INSTANT;
	isc_json_kv_string(j, "ph", instant ? "i" : "X");
	isc_json_kv_string(j, "cat", category(e->type));
	bool copy = e->type >= ISC_T_H2D && e->type <= ISC_T_H2H;
	isc_json_kv_string(j, "name", copy ? copy_name(e, name) : name);
	where(j, t, e);
	isc_json_key(j, "ts");
	isc_json_ns_as_us(j, e->ts);
	if (instant) {
		isc_json_kv_string(j, "s", "t");
	} else {
		isc_json_key(j, "dur");
		isc_json_ns_as_us(j, e->dur);
	}
	args(j, t, e);
	isc_json_end_object(j);
}

static void annotations(struct isc_json *j, const struct isc_trace *t)
{
	for (size_t i = 0; t->extra != NULL && i < t->extra->n_annot && j->err == 0; i++) {
		const struct isc_gpu_annot *an = &t->extra->annot[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "ph", "X");
		isc_json_kv_string(j, "cat", "gpu_user_annotation");
		isc_json_kv_string(j, "name", isc_trace_str(t, an->name));
		isc_json_kv_int(j, "pid", an->device >= 0 ? an->device : 0);
		isc_json_kv_int(j, "tid", an->stream);
		isc_json_key(j, "ts");
		isc_json_ns_as_us(j, an->ts);
		isc_json_key(j, "dur");
		isc_json_ns_as_us(j, an->dur);
		isc_json_key(j, "args");
		isc_json_begin_object(j);
		isc_json_kv_int(j, "device", an->device);
		isc_json_kv_int(j, "stream", an->stream);
		if (an->corr != 0) {
			isc_json_kv_uint(j, "correlation", an->corr);
		}
		isc_json_end_object(j);
		isc_json_end_object(j);
	}
}

/* The first input's verbatim metadata: one export file is one rank for HTA. */
static void top_metadata(struct isc_json *j, const struct isc_trace *t)
{
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		if (in->distributed_info != NULL || in->device_properties != NULL) {
			if (in->distributed_info != NULL) {
				isc_json_key(j, "distributedInfo");
				isc_json_raw(j, in->distributed_info, strlen(in->distributed_info));
			}
			if (in->device_properties != NULL) {
				isc_json_key(j, "deviceProperties");
				isc_json_raw(j, in->device_properties,
					     strlen(in->device_properties));
			}
			return;
		}
	}
}

/* The ac2g pair Perfetto draws as an arrow from the call to the GPU work. */
static void flow(struct isc_json *j, const struct isc_trace *t, const struct isc_ev *gpu)
{
	const struct isc_ev *api = isc_trace_launch_of(t, gpu);
	if (api == NULL) {
		return;
	}
	for (int end = 0; end < 2; end++) {
		const struct isc_ev *e = end ? gpu : api;
		isc_json_begin_object(j);
		isc_json_kv_string(j, "ph", end ? "f" : "s");
		isc_json_kv_uint(j, "id", gpu->corr);
		where(j, t, e);
		isc_json_key(j, "ts");
		isc_json_ns_as_us(j, e->ts);
		isc_json_kv_string(j, "cat", "ac2g");
		isc_json_kv_string(j, "name", "ac2g");
		if (end) {
			isc_json_kv_string(j, "bp", "e");
		}
		isc_json_end_object(j);
	}
}

static void meta(struct isc_json *j, const char *what, int64_t pid, int64_t tid, const char *v)
{
	isc_json_begin_object(j);
	isc_json_kv_string(j, "ph", "M");
	isc_json_kv_string(j, "name", what);
	isc_json_kv_int(j, "pid", pid);
	isc_json_kv_int(j, "tid", tid);
	isc_json_key(j, "args");
	isc_json_begin_object(j);
	isc_json_kv_string(j, "name", v);
	isc_json_end_object(j);
	isc_json_end_object(j);
}

static void names(struct isc_json *j, const struct isc_trace *t)
{
	char buf[64];
	for (size_t i = 0; i < t->n_inputs; i++) {
		snprintf(buf, sizeof(buf), "process %lld", (long long)pid_of(t, (uint16_t)i));
		meta(j, "process_name", pid_of(t, (uint16_t)i), 0, buf);
	}
	for (size_t i = 0; i < t->n_threads; i++) {
		const struct isc_thread_info *th = &t->threads[i];
		if (th->name != 0) {
			meta(j, "thread_name", pid_of(t, th->input), th->tid,
			     isc_trace_str(t, th->name));
		}
	}
}

int isc_export_chrome(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		      const struct isc_report_opts *o)
{
	char buf[65536];
	struct isc_json j;
	isc_json_init(&j, buf, sizeof(buf), isc_json_sink_file, f);
	isc_json_begin_object(&j);
	isc_json_kv_string(&j, "schemaVersion", "1");
	top_metadata(&j, t);
	isc_json_key(&j, "traceEvents");
	isc_json_begin_array(&j);
	names(&j, t);
	uint8_t *flowed = calloc(t->n / 8 + 1, 1); /* launch calls that have their flow */
	if (flowed == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n && j.err == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_MEMORY || e->type == ISC_T_CPU_SAMPLE) {
			/* sampled allocations have no place on a Chrome timeline; CPU samples
			 * are the format's own "samples", with their stacks, below */
			continue;
		}
		event(&j, t, e);
		const struct isc_ev *api =
			isc_type_is_gpu(e->type) ? isc_trace_launch_of(t, e) : NULL;
		size_t k = api != NULL ? (size_t)(api - t->ev) : 0;
		if (api != NULL && !(flowed[k >> 3] & (1u << (k & 7)))) {
			flowed[k >> 3] |= (uint8_t)(1u << (k & 7));
			flow(&j, t, e);
		}
	}
	free(flowed);
	annotations(&j, t);
	isc_json_end_array(&j);
	if (isc_chrome_samples(&j, t) < 0) {
		return -ENOMEM;
	}
	isc_json_kv_string(&j, "displayTimeUnit", "ms");
	isc_json_key(&j, "otherData");
	isc_json_begin_object(&j);
	isc_json_kv_string(&j, "generator", "inferscope-analyze");
	isc_json_kv_string(&j, "version", o->version);
	isc_json_kv_string(&j, "verdict", isc_bound_name(a->verdict.type));
	isc_json_end_object(&j);
	isc_json_end_object(&j);
	isc_json_raw(&j, "\n", 1);
	return isc_json_flush(&j) < 0 || ferror(f) ? -EIO : 0;
}
