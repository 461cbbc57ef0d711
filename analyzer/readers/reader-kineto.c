/* SPDX-License-Identifier: MIT */
/*
 * Reader for Chrome trace JSON as the PyTorch profiler writes it, every generation
 * (docs/trace-format.md, "Kineto input"): {"traceEvents": [...], "deviceProperties": [...]}
 * or a bare array of trace events, gzip'd or not. Complete events ("ph": "X") are mapped
 * by their category, whatever its spelling (cpu_op or Operator, cuda_runtime or Runtime,
 * kernel or Kernel...: one key map, looked up once per event), or, in the legacy
 * torch.autograd.profiler export that has none, by their process ("CPU functions",
 * "CUDA functions"). GPU events carry args.correlation like the runtime call that caused
 * them; flow events (launch and autograd links) become the model's flows
 * (reader-kineto-flows.c). Thread ids come as numbers or strings ("1890023232",
 * "stream 7"). This is not our format, so it is read leniently: what cannot be used is
 * counted and skipped; only a broken structure, or an input with no event of a known
 * kind, stops the read. traceEvents is read on the analysis threads in parts
 * (reader-kineto-par.c) where the input can be read at any offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/json-dom.h"
#include "analyzer/readers/json-sax.h"
#include "analyzer/base/grow.h"
#include "analyzer/base/json-number.h"
#include "analyzer/base/key-map.h"
#include "analyzer/readers/reader.h"
#include "analyzer/readers/reader-kineto.h"

enum kkey {
	KK_TRACE_EVENTS,
	KK_DEVICE_PROPS, /* top level */
	KK_PH,
	KK_CAT,
	KK_NAME,
	KK_PID,
	KK_TID,
	KK_TS,
	KK_DUR,
	KK_ARGS, /* event */
	KK_CORRELATION,
	KK_STREAM,
	KK_DEVICE,
	KK_BYTES,
	KK_OCCUPANCY,
	KK_BLOCK,
	KK_ARG_NAME,
	KK_NUM_SMS,
	KK_THREADS_PER_SM,
	KK_REGS_PER_SM,
	KK_SHMEM_PER_SM,
	KK_WARP, /* device */
	KK_DIST, /* top level */
	KK_GRID,
	KK_REGS,
	KK_SMEM, /* kernel geometry */
	KK_WAIT_STREAM,
	KK_WAIT_RECORD, /* cuda_sync: what recorded the event waited for */
	KK_ID,		/* flow events */
};

enum { CAT_NONE = -2, CAT_UNKNOWN = -1 };

/* How an event's pid names its process. */
enum pid_kind { PK_NUM, PK_LEGACY_CPU = ISC_KT_LEGACY_CPU, PK_LEGACY_GPU, PK_OTHER };

static const struct isc_keydef kdefs[] = {
	{ "traceEvents", KK_TRACE_EVENTS },
	{ "deviceProperties", KK_DEVICE_PROPS },
	{ "ph", KK_PH },
	{ "cat", KK_CAT },
	{ "name", KK_NAME },
	{ "pid", KK_PID },
	{ "tid", KK_TID },
	{ "ts", KK_TS },
	{ "dur", KK_DUR },
	{ "args", KK_ARGS },
	{ "correlation", KK_CORRELATION },
	{ "stream", KK_STREAM },
	{ "device", KK_DEVICE },
	{ "bytes", KK_BYTES },
	{ "est. achieved occupancy %", KK_OCCUPANCY },
	{ "block", KK_BLOCK },
	{ "numSms", KK_NUM_SMS },
	{ "maxThreadsPerMultiprocessor", KK_THREADS_PER_SM },
	{ "regsPerMultiprocessor", KK_REGS_PER_SM },
	{ "sharedMemPerMultiprocessor", KK_SHMEM_PER_SM },
	{ "warpSize", KK_WARP },
	{ "distributedInfo", KK_DIST },
	{ "grid", KK_GRID },
	{ "registers per thread", KK_REGS },
	{ "shared memory", KK_SMEM },
	{ "wait_on_stream", KK_WAIT_STREAM },
	{ "wait_on_cuda_event_record_corr_id", KK_WAIT_RECORD },
	{ "id", KK_ID },
};

/* The legacy export's processes: its host functions and its GPU intervals. */
static const struct isc_keydef legacy_pids[] = {
	{ "CPU functions", ISC_KT_LEGACY_CPU },
	{ "CUDA functions", ISC_KT_LEGACY_GPU },
};

static int fail(struct krd *r, const char *what)
{
	isc_diag_set(r->rc->diag, "%s: byte %llu: %s", r->rc->label,
		     (unsigned long long)isc_jsax_offset(&r->js), what);
	r->js.failed = true;
	return 0;
}

static int cur(const struct krd *r)
{
	return isc_jframes_cur(&r->fr, KF_SKIP);
}

static int push(struct krd *r, int fr)
{
	isc_jframes_push(&r->fr, fr);
	r->key = -1;
	return 1;
}

static void begin_event(struct krd *r)
{
	memset(&r->ev, 0, sizeof(r->ev));
	r->ev.cat = CAT_NONE;
	r->ev.index = r->n_events++;
	r->ev.regs = r->ev.smem = -1;
	r->ev.offset = isc_jsax_offset(&r->js);
}

/* Thread ids as strings: a number ("1890023232", PyTorch 1.8), a GPU stream ("stream 7"),
 * or a name (the legacy export's remote threads), which gets an id of its own below 0. */
static void string_tid(struct krd *r, const char *s, size_t n)
{
	struct kev *e = &r->ev;
	if (n > 7 && memcmp(s, "stream ", 7) == 0 && isc_num_int(s + 7, n - 7, &e->tid)) {
		e->tid_kind = ISC_KT_STREAM;
	} else if (!isc_num_int(s, n, &e->tid)) {
		e->tid = -1 - (int64_t)isc_trace_intern(r->rc->t, s, n);
		e->tid_str = true;
	}
}

static void event_value(struct krd *r, int jt, const char *s, size_t n)
{
	struct kev *e = &r->ev;
	bool num = jt == ISC_J_INT || jt == ISC_J_DOUBLE;
	int64_t i = 0;
	if (jt == ISC_J_INT) {
		isc_num_int(s, n, &i);
	} else if (jt == ISC_J_DOUBLE) {
		i = isc_d2i(isc_num_double(s, n));
	}
	switch (r->key) {
	case KK_PH:
		e->ph = n == 1 ? s[0] : n == 0 ? '\0' : '?';
		break;
	case KK_CAT:
		e->cat = jt == ISC_J_STRING ? isc_keymap_get(&r->cats, s, n) : CAT_UNKNOWN;
		if (e->cat == CAT_UNKNOWN) {
			snprintf(e->cat_raw, sizeof(e->cat_raw), "%.*s", (int)n, s);
		}
		break;
	case KK_NAME:
		if (jt == ISC_J_STRING) {
			e->name = isc_trace_intern(r->rc->t, s, n);
		}
		break;
	case KK_PID:
		e->pid = i;
		e->pid_kind = num ? PK_NUM : PK_OTHER;
		if (jt == ISC_J_STRING) {
			int k = isc_keymap_get(&r->pids, s, n);
			e->pid_kind = k >= 0 ? (uint8_t)k : PK_OTHER;
		}
		break;
	case KK_TID:
		e->tid = i;
		e->tid_kind = ISC_KT_NUM;
		e->tid_str = false;
		if (jt == ISC_J_STRING) {
			string_tid(r, s, n);
		}
		break;
	case KK_ID:
		e->has_id = num || jt == ISC_J_STRING;
		e->id_str = jt == ISC_J_STRING;
		e->id = jt == ISC_J_STRING ? isc_trace_intern(r->rc->t, s, n) : (uint64_t)i;
		break;
	case KK_TS:
		e->has_ts = num && isc_num_us_to_ns(s, n, &e->ts);
		break;
	case KK_DUR:
		e->has_dur = num && isc_num_us_to_ns(s, n, &e->dur);
		break;
	default:
		break;
	}
}

static void args_value(struct krd *r, int jt, const char *s, size_t n)
{
	struct kev *e = &r->ev;
	int64_t i = 0;
	bool is_int = jt == ISC_J_INT && isc_num_int(s, n, &i);
	switch (r->key) {
	case KK_CORRELATION:
		e->corr = i;
		e->has_corr = is_int;
		break;
	case KK_STREAM:
		e->stream = i;
		e->has_stream = is_int;
		break;
	case KK_DEVICE:
		e->device = i;
		e->has_dev = is_int;
		break;
	case KK_REGS:
		e->regs = is_int ? i : -1;
		break;
	case KK_SMEM:
		e->smem = is_int ? i : -1;
		break;
	case KK_WAIT_STREAM:
		e->wait.stream = i;
		e->wait.has_stream = is_int;
		break;
	case KK_WAIT_RECORD:
		e->wait.record_corr = i;
		e->wait.has_record = is_int;
		break;
	case KK_BYTES:
		e->bytes = i;
		break;
	case KK_OCCUPANCY:
		if (jt == ISC_J_INT || jt == ISC_J_DOUBLE) {
			e->occ = isc_num_double(s, n) / 100.0;
			e->has_occ = true;
		}
		break;
	case KK_ARG_NAME:
		if (jt == ISC_J_STRING) {
			e->arg_name = isc_trace_intern(r->rc->t, s, n);
		}
		break;
	case KK_NAME:
		/* args.name of a metadata event: the thread or process name */
		if (jt == ISC_J_STRING) {
			e->arg_name = isc_trace_intern(r->rc->t, s, n);
		}
		break;
	default:
		break;
	}
}

static void device_value(struct krd *r, int jt, const char *s, size_t n)
{
	struct isc_device_info *d = &r->rc->t->inputs[r->rc->input].device;
	int64_t i = 0;
	if (r->n_devs != 1 || jt != ISC_J_INT || !isc_num_int(s, n, &i)) {
		return;
	}
	d->present = true;
	switch (r->key) {
	case KK_NUM_SMS:
		d->sm_count = (int)i;
		break;
	case KK_THREADS_PER_SM:
		d->max_threads_per_sm = (int)i;
		break;
	case KK_REGS_PER_SM:
		d->max_registers_per_sm = (int)i;
		break;
	case KK_SHMEM_PER_SM:
		d->max_shared_memory_per_sm = (int)i;
		break;
	case KK_WARP:
		d->warp_size = (int)i;
		break;
	default:
		break;
	}
}

static int on_value(struct krd *r, int jt, const char *s, size_t n, bool b)
{
	isc_jsax_tick(&r->js);
	if (r->cap_what >= 0) {
		isc_jcap_scalar(&r->cap, jt == ISC_J_STRING, s, n);
	}
	switch (cur(r)) {
	case -1:
		return fail(r, "expected an object or an array at the top level");
	case KF_TOP:
		if (r->key == KK_TRACE_EVENTS) {
			return fail(r, "traceEvents: expected an array");
		}
		return 1;
	case KF_EVENTS:
		r->n_events++;
		r->non_objects++;
		r->rc->t->inputs[r->rc->input].skipped++;
		return 1;
	case KF_EVENT:
		event_value(r, jt, s, n);
		return 1;
	case KF_ARGS:
		args_value(r, jt, s, n);
		return 1;
	case KF_BLOCK:
		if (r->ev.nblock < 3 && jt == ISC_J_INT) {
			isc_num_int(s, n, &r->ev.block[r->ev.nblock]);
		}
		r->ev.nblock++;
		return 1;
	case KF_GRID:
		if (r->ev.ngrid < 3 && jt == ISC_J_INT) {
			isc_num_int(s, n, &r->ev.grid[r->ev.ngrid]);
		}
		r->ev.ngrid++;
		return 1;
	case KF_DEV:
		device_value(r, jt, s, n);
		return 1;
	default:
		return 1;
	}
}

static bool has(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

static int gpu_event(struct isc_read_ctx *rc, const struct kev *e, const char *name,
		     struct isc_ev *ev)
{
	bool legacy = e->pid_kind == PK_LEGACY_GPU;
	/* The legacy export's GPU intervals: the device is the tid, the stream unnamed */
	bool has_stream = e->has_stream || e->tid_kind == ISC_KT_STREAM || legacy;
	int64_t stream = e->has_stream ? e->stream : e->tid_kind == ISC_KT_STREAM ? e->tid : 0;
	/* Kineto's GPU events have the device as their pid */
	int64_t device = e->has_dev ? e->device : legacy ? e->tid : e->pid;
	ev->corr = e->has_corr ? (uint64_t)e->corr : 0;
	ev->stream = has_stream ? (int32_t)stream : 0;
	ev->device = (int16_t)device;
	ev->v.bytes = e->bytes > 0 ? (uint64_t)e->bytes : 0;
	ev->thread = UINT32_MAX; /* the launching thread, found through the correlation */
	ev->flags |= has(name, "Pageable") ? ISC_F_PAGEABLE : 0;
	ev->flags |= has(name, "Pinned") ? ISC_F_PINNED : 0;
	if (e->has_occ) {
		ev->occupancy = (float)(e->occ < 0 ? 0 : e->occ > 1 ? 1 : e->occ);
	}
	/* A stream of -1 is no stream: HTA leaves such records out of its GPU numbers. */
	ev->flags |= !has_stream || stream < 0 ? ISC_F_NO_STREAM : 0;
	if (ev->type != ISC_T_KERNEL ||
	    (e->ngrid == 0 && e->nblock == 0 && e->regs < 0 && e->smem < 0)) {
		return 0;
	}
	struct isc_kernel_geom g = { .regs = e->regs, .smem = e->smem };
	for (int k = 0; k < 3; k++) {
		g.grid[k] = k < e->ngrid ? (int32_t)e->grid[k] : 0;
		g.block[k] = k < e->nblock ? (int32_t)e->block[k] : 0;
	}
	return isc_trace_add_geom(rc->t, ev, &g);
}

static bool api_blocks(const char *name)
{
	return has(name, "Synchronize") ||
	       (strncmp(name, "cudaMemcpy", 10) == 0 && !has(name, "Async"));
}

static int metadata_event(struct krd *r, const char *name)
{
	struct isc_read_ctx *rc = r->rc;
	const struct kev *e = &r->ev;
	rc->t->inputs[rc->input].ignored++;
	if (strcmp(name, "thread_name") == 0 && e->pid_kind == PK_NUM && e->arg_name != 0) {
		uint32_t k = isc_trace_thread(rc->t, rc->input, e->tid);
		if (k == UINT32_MAX) {
			return fail(r, "out of memory");
		}
		rc->t->threads[k].name = e->arg_name;
	}
	return 1;
}

/* The model type of a complete event: by its category, or in the legacy export (no
 * category) by its process; -1 when it is not an event of the model. */
static int complete_type(const struct kev *e, int kind, const char *name)
{
	switch (kind) {
	case ISC_KK_KERNEL:
		return ISC_T_KERNEL;
	case ISC_KK_MEMCPY:
		return isc_kineto_memcpy_type(name);
	case ISC_KK_MEMSET:
		return ISC_T_MEMSET;
	case ISC_KK_SYNC:
		return ISC_T_GPU_SYNC;
	case ISC_KK_API:
		return ISC_T_CUDA_API;
	case ISC_KK_CPU_OP:
		return ISC_T_CPU_OP;
	case ISC_KK_SCOPE:
		return ISC_T_SCOPE;
	case -1:
		if (e->cat != CAT_NONE) {
			return -1;
		}
		return e->pid_kind == PK_LEGACY_CPU   ? ISC_T_CPU_OP
		       : e->pid_kind == PK_LEGACY_GPU ? ISC_T_KERNEL
						      : -1;
	default:
		return -1;
	}
}

/* What the event says when it is no event of the model: a flow endpoint, a GPU-side
 * annotation, or a category to count. */
static int other_event(struct krd *r, int kind)
{
	const struct kev *e = &r->ev;
	struct isc_read_ctx *rc = r->rc;
	if ((kind == ISC_KK_FLOW_LAUNCH || kind == ISC_KK_FLOW_FWDBWD) && e->has_id && e->has_ts &&
	    (e->ph == 's' || e->ph == 't' || e->ph == 'f')) {
		bool same = r->last.valid && r->last.ts == e->ts && r->last.pid == e->pid &&
			    r->last.tid == e->tid && r->last.pid_kind == e->pid_kind &&
			    r->last.tid_kind == e->tid_kind;
		struct isc_kineto_flow_end f = {
			.ts = e->ts,
			.id = e->id,
			.pid = e->pid,
			.tid = e->tid,
			.ev = same ? r->last.ev : 0,
			.id_str = e->id_str,
			.pid_kind = e->pid_kind,
			.tid_kind = e->tid_kind,
			.kind = kind == ISC_KK_FLOW_LAUNCH ? ISC_FLOW_LAUNCH : ISC_FLOW_FWDBWD,
			.phase = (uint8_t)e->ph,
			.track = e->pid_kind == PK_LEGACY_GPU || e->pid_kind == PK_LEGACY_CPU
					 ? e->pid_kind
					 : e->tid_kind,
		};
		return isc_kineto_flow_add(&r->flows, &f);
	}
	if (e->ph != 'X' || !e->has_ts) {
		return 0;
	}
	struct isc_kineto_other o = { e->cat_raw, e->name, e->ts,	  e->dur,     e->stream,
				      e->device,  e->corr, e->has_stream, e->has_dev, e->has_corr };
	if (kind == ISC_KK_GPU_ANNOT) {
		return isc_kineto_gpu_annot(rc, &o);
	}
	struct isc_agg g;
	if (e->cat != CAT_UNKNOWN || !isc_kineto_other_agg(rc, &o, &g)) {
		return 0;
	}
	if (r->mode != KRD_PART) {
		return isc_agg_add(&rc->t->inputs[rc->input].unknown_cats, &g);
	}
	/* added at the merge, in order: sums of doubles in another order could differ */
	if (ISC_GROW(r->unk, r->cap_unk, r->n_unk + 1, 8) < 0) {
		return -ENOMEM;
	}
	r->unk[r->n_unk++] = g;
	return 0;
}

static void tally(struct krd *r, int kind)
{
	const struct kev *e = &r->ev;
	if (e->cat >= 0) {
		r->cat_seen[e->cat]++;
	} else if (e->cat == CAT_UNKNOWN) {
		r->unknown_seen++;
	} else if (kind < 0) {
		r->nocat_seen[(unsigned char)e->ph & 127]++;
	}
}

static int end_event(struct krd *r)
{
	struct isc_read_ctx *rc = r->rc;
	struct isc_input *in = &rc->t->inputs[rc->input];
	const struct kev *e = &r->ev;
	const char *name = isc_trace_str(rc->t, e->name);
	int kind = e->cat >= 0 ? isc_kineto_cat_kind[e->cat] : -1;
	tally(r, kind);
	if (r->mode == KRD_PART && e->tid < 0 && !e->tid_str) {
		return fail(r, "read serially"); /* a part's string tids are the negative ones */
	}
	if (e->ph == 'M') {
		return metadata_event(r, name);
	}
	int type = e->ph == 'X'			  ? complete_type(e, kind, name)
		   : e->ph == 'i' || e->ph == 'I' ? ISC_T_INSTANT
						  : -1;
	bool gpu = type >= 0 && isc_type_is_gpu((unsigned)type);
	/* Spans, markers and records of no process ("Traces", "Spans", "") are no events */
	bool usable = e->pid_kind == PK_NUM || e->pid_kind == (gpu ? PK_LEGACY_GPU : PK_LEGACY_CPU);
	if (e->ph == 'X') {
		if (!r->last.valid) {
			r->flows_pre = r->flows.n;
		}
		r->last = (struct last_slice){ e->pid,	    e->tid, e->ts, e->pid_kind,
					       e->tid_kind, 0,	    true };
	}
	if (type < 0 || !e->has_ts || !usable) {
		if (other_event(r, kind) < 0) {
			return fail(r, "out of memory");
		}
		/* Flows, counters, spans and categories the analysis has no use for. */
		in->ignored += e->ph != '\0';
		in->skipped += e->ph == '\0';
		return 1;
	}
	struct isc_ev *ev = isc_trace_push(rc->t);
	if (ev == NULL) {
		return fail(r, "out of memory");
	}
	r->last.ev = (uint32_t)rc->t->n;
	ev->type = (uint8_t)type;
	ev->name = e->name;
	ev->ts = e->ts;
	ev->dur = e->has_dur && e->dur > 0 ? e->dur : 0;
	ev->input = rc->input;
	if (gpu) {
		if (gpu_event(rc, e, name, ev) < 0) {
			return fail(r, "out of memory");
		}
	} else {
		ev->thread = isc_trace_thread(rc->t, rc->input, e->tid);
		if (ev->thread == UINT32_MAX) {
			return fail(r, "out of memory");
		}
		if (in->pid == 0 && e->pid_kind == PK_NUM) {
			in->pid = e->pid;
		}
	}
	if (type == ISC_T_GPU_SYNC) {
		isc_kineto_sync_fields(ev, name, &e->wait);
	} else if (type == ISC_T_CUDA_API) {
		ev->corr = e->has_corr ? (uint64_t)e->corr : 0;
		ev->sub = (uint8_t)isc_api_classify(name);
		ev->flags |= api_blocks(name) ? ISC_F_BLOCKED : 0;
	} else if (type == ISC_T_SCOPE) {
		ev->sub = ISC_SRC_KINETO;
	}
	in->events++;
	return 1;
}

/* The array of trace events opens: where a parallel read's parts begin. */
static int events_open(struct krd *r)
{
	r->seen_events = true;
	if (r->mode == KRD_MAIN) {
		isc_jscan_pause(r->js.scan);
	}
	return push(r, KF_EVENTS);
}

static int on_open(struct krd *r, bool is_map)
{
	isc_jsax_tick(&r->js);
	if (cur(r) == KF_TOP && (r->key == KK_DIST || r->key == KK_DEVICE_PROPS)) {
		r->cap_what = r->key;
	}
	if (r->cap_what >= 0) {
		isc_jcap_open(&r->cap, is_map);
	}
	switch (cur(r)) {
	case -1:
		if (!is_map) {
			return events_open(r);
		}
		return push(r, KF_TOP);
	case KF_TOP:
		if (r->key == KK_TRACE_EVENTS) {
			if (is_map) {
				return fail(r, "traceEvents: expected an array, got an object");
			}
			return events_open(r);
		}
		return push(r, r->key == KK_DEVICE_PROPS && !is_map ? KF_DEVS : KF_SKIP);
	case KF_EVENTS:
		if (!is_map) {
			r->n_events++;
			r->non_objects++;
			r->rc->t->inputs[r->rc->input].skipped++;
			return push(r, KF_SKIP);
		}
		begin_event(r);
		return push(r, KF_EVENT);
	case KF_EVENT:
		return push(r, r->key == KK_ARGS && is_map ? KF_ARGS : KF_SKIP);
	case KF_ARGS:
		if ((r->key == KK_BLOCK || r->key == KK_GRID) && !is_map) {
			return push(r, r->key == KK_BLOCK ? KF_BLOCK : KF_GRID);
		}
		return push(r, KF_SKIP);
	case KF_DEVS:
		r->n_devs++;
		return push(r, is_map ? KF_DEV : KF_SKIP);
	default:
		return push(r, KF_SKIP);
	}
}

static int on_close(struct krd *r)
{
	isc_jsax_tick(&r->js);
	if (r->cap_what >= 0 && isc_jcap_close(&r->cap)) {
		isc_kineto_meta_value(r->rc, r->cap_what == KK_DIST, isc_jcap_take(&r->cap));
		r->cap_what = -1;
	}
	int fr = isc_jframes_pop(&r->fr);
	if (fr < 0) {
		return 1;
	}
	r->key = -1;
	if (fr == KF_EVENTS && r->mode == KRD_PART) {
		isc_jscan_pause(r->js.scan); /* the main reader goes on from here */
	}
	return fr == KF_EVENT ? end_event(r) : 1;
}

static int on_key(struct krd *r, const char *s, size_t n)
{
	isc_jsax_tick(&r->js);
	r->key = isc_keymap_get(&r->keys, s, n);
	if (r->cap_what >= 0) {
		isc_jcap_key(&r->cap, s, n);
	}
	if (cur(r) == KF_ARGS && r->key == KK_NAME) {
		r->key = KK_ARG_NAME;
	}
	return 1;
}

ISC_JSAX_CALLBACKS(callbacks, struct krd, on_open, on_close, on_key, on_value);

/* Appends "SEP[LEAD]NAME (N)" to buf: LEAD before the first of a list, SEP between. */
static void seen(char *buf, size_t cap, bool *first, const char *lead, const char *name, uint64_t n)
{
	size_t len = strlen(buf);
	if (n > 0 && len + 1 < cap) {
		snprintf(buf + len, cap - len, "%s%s%s (%llu)",
			 len == 0 ? ""
			 : *first ? "; "
				  : ", ",
			 *first ? lead : "", name, (unsigned long long)n);
		*first = false;
	}
}

/* Nothing of a known kind was read: say what was there instead. */
static int nothing_known(struct krd *r)
{
	const struct isc_input *in = &r->rc->t->inputs[r->rc->input];
	char saw[320] = "";
	bool first = true;
	uint64_t counted = 0;
	for (size_t i = 0; i < isc_kineto_n_cats; i++) {
		seen(saw, sizeof(saw), &first, "cat ", isc_kineto_cats[i].key, r->cat_seen[i]);
	}
	for (size_t i = 0; i < in->unknown_cats.n; i++) {
		const struct isc_agg *g = &in->unknown_cats.v[i];
		seen(saw, sizeof(saw), &first, "cat ", isc_trace_str(r->rc->t, g->name), g->count);
		counted += g->count;
	}
	seen(saw, sizeof(saw), &first, "cat ", "others", r->unknown_seen - counted);
	first = true;
	for (int ph = 0; ph < 128; ph++) {
		char what[16];
		snprintf(what, sizeof(what), ph > ' ' ? "ph %c" : "no ph", ph);
		seen(saw, sizeof(saw), &first, "no cat: ", what, r->nocat_seen[ph]);
	}
	first = true;
	seen(saw, sizeof(saw), &first, "", "array elements that are not objects", r->non_objects);
	isc_diag_set(r->rc->diag, "%s: no events of a known kind in %llu trace events%s%s",
		     r->rc->label, (unsigned long long)r->n_events, saw[0] ? ": saw " : "",
		     saw[0] ? saw : " (the array is empty)");
	return -EINVAL;
}

struct krd *isc_krd_new(struct isc_read_ctx *rc)
{
	struct krd *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		return NULL;
	}
	r->rc = rc;
	r->key = -1;
	r->cap_what = -1;
	r->first_ev = rc->t->n;
	isc_keymap_build(&r->keys, kdefs, sizeof(kdefs) / sizeof(kdefs[0]));
	isc_keymap_build(&r->cats, isc_kineto_cats, isc_kineto_n_cats);
	isc_keymap_build(&r->pids, legacy_pids, sizeof(legacy_pids) / sizeof(legacy_pids[0]));
	if (isc_jsax_init(&r->js, &callbacks, r, rc->label, rc->diag) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

void isc_krd_free(struct krd *r)
{
	if (r == NULL) {
		return;
	}
	isc_jsax_finish(&r->js);
	free(r->flows.v);
	free(r->unk);
	free(isc_jcap_take(&r->cap));
	free(r);
}

static int read_kineto(struct isc_read_ctx *rc)
{
	struct krd *r = isc_krd_new(rc);
	if (r == NULL) {
		isc_diag_set(rc->diag, "%s: out of memory", rc->label);
		return -ENOMEM;
	}
	snprintf(rc->t->inputs[rc->input].format_version,
		 sizeof(rc->t->inputs[rc->input].format_version), "chrome");
	int ret = isc_krd_read(r);
	if (ret == 0 && !r->seen_events) {
		isc_diag_set(rc->diag, "%s: byte 0: no \"traceEvents\" array", rc->label);
		ret = -EINVAL;
	}
	if (ret == 0 && isc_kineto_flows_finish(rc, &r->flows, r->first_ev) < 0) {
		isc_diag_set(rc->diag, "%s: out of memory", rc->label);
		ret = -ENOMEM;
	}
	if (ret == 0 && rc->t->inputs[rc->input].events == 0) {
		ret = nothing_known(r);
	}
	isc_krd_free(r);
	return ret;
}

static size_t detect_kineto(const struct isc_source *src)
{
	size_t first = isc_head_first(src);
	if (first != SIZE_MAX && src->head[first] == '[') {
		return first;
	}
	return isc_head_find(src, "\"traceEvents\"");
}

const struct isc_reader isc_reader_kineto = {
	.name = "kineto",
	.what = "a Chrome/Kineto trace (traceEvents)",
	.detect = detect_kineto,
	.read = read_kineto,
};
