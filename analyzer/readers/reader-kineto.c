/* SPDX-License-Identifier: MIT */
/*
 * Reader for Chrome trace JSON as the PyTorch profiler (Kineto) writes it:
 * {"traceEvents": [...], "deviceProperties": [...]} or a bare array of trace events,
 * gzip'd or not. Complete events ("ph": "X") are mapped by their category: kernel,
 * gpu_memcpy, gpu_memset, cuda_sync, cuda_runtime, cuda_driver, cpu_op, user_annotation.
 * GPU events carry args.correlation like the runtime call that caused them, which is all
 * the analyzer needs to link them; the ac2g flow events say the same thing again and are
 * not read. This is not our format, so it is read leniently: what cannot be used is
 * counted and skipped, and only a broken structure stops the read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/base/json-dom.h"
#include "analyzer/readers/json-sax.h"
#include "analyzer/base/json-number.h"
#include "analyzer/base/key-map.h"
#include "analyzer/readers/reader.h"
#include "analyzer/readers/reader-kineto-extra.h"

enum kframe { KF_TOP, KF_EVENTS, KF_EVENT, KF_ARGS, KF_BLOCK, KF_GRID, KF_DEVS, KF_DEV, KF_SKIP };

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
};

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
};

struct kev {
	uint64_t index, offset;
	char ph[4];
	char cat[32];
	uint32_t name, arg_name;
	int64_t pid, tid, ts, dur, corr, stream, device, bytes;
	double occ;
	int64_t block[3], grid[3], regs, smem;
	int nblock, ngrid;
	struct isc_kineto_wait wait;
	bool has_ts, has_dur, has_corr, has_stream, has_occ, pid_is_num, has_dev;
};

struct krd {
	struct isc_read_ctx *rc;
	struct isc_jsax js;
	struct isc_keymap keys;
	struct isc_jframes fr;
	int key;
	struct kev ev;
	uint64_t n_events, n_devs;
	bool seen_events;
	struct isc_jcap cap; /* distributedInfo or deviceProperties, verbatim */
	int cap_what;	     /* KK_DIST, KK_DEVICE_PROPS or -1 */
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
	r->ev.index = r->n_events++;
	r->ev.regs = r->ev.smem = -1;
	r->ev.offset = isc_jsax_offset(&r->js);
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
		snprintf(e->ph, sizeof(e->ph), "%.*s", (int)n, s);
		break;
	case KK_CAT:
		snprintf(e->cat, sizeof(e->cat), "%.*s", (int)n, s);
		break;
	case KK_NAME:
		if (jt == ISC_J_STRING) {
			e->name = isc_trace_intern(r->rc->t, s, n);
		}
		break;
	case KK_PID:
		e->pid = i;
		e->pid_is_num = num;
		break;
	case KK_TID:
		e->tid = i;
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
	ev->corr = e->has_corr ? (uint64_t)e->corr : 0;
	ev->stream = e->has_stream ? (int32_t)e->stream : 0;
	ev->device = (int16_t)e->device;
	ev->v.bytes = e->bytes > 0 ? (uint64_t)e->bytes : 0;
	ev->thread = UINT32_MAX; /* the launching thread, found through the correlation */
	ev->flags |= has(name, "Pageable") ? ISC_F_PAGEABLE : 0;
	ev->flags |= has(name, "Pinned") ? ISC_F_PINNED : 0;
	if (e->has_occ) {
		ev->occupancy = (float)(e->occ < 0 ? 0 : e->occ > 1 ? 1 : e->occ);
	}
	/* A stream of -1 is no stream: HTA leaves such records out of its GPU numbers. */
	ev->flags |= !e->has_stream || e->stream < 0 ? ISC_F_NO_STREAM : 0;
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
	if (strcmp(name, "thread_name") == 0 && e->pid_is_num && e->arg_name != 0) {
		uint32_t k = isc_trace_thread(rc->t, rc->input, e->tid);
		if (k == UINT32_MAX) {
			return fail(r, "out of memory");
		}
		rc->t->threads[k].name = e->arg_name;
	}
	return 1;
}

static int end_event(struct krd *r)
{
	struct isc_read_ctx *rc = r->rc;
	struct isc_input *in = &rc->t->inputs[rc->input];
	const struct kev *e = &r->ev;
	const char *name = isc_trace_str(rc->t, e->name);
	if (e->ph[0] == 'M') {
		return metadata_event(r, name);
	}
	bool complete = strcmp(e->ph, "X") == 0;
	bool instant = strcmp(e->ph, "i") == 0 || strcmp(e->ph, "I") == 0;
	int type = complete ? isc_kineto_type_of(e->cat, name) : instant ? ISC_T_INSTANT : -1;
	if (type < 0 && complete && e->has_ts) {
		struct isc_kineto_other o = { e->cat,	  e->name,    e->ts,   e->dur,
					      e->stream,  e->device,  e->corr, e->has_stream,
					      e->has_dev, e->has_corr };
		if (isc_kineto_other_event(rc, &o) < 0) {
			return fail(r, "out of memory");
		}
	}
	if (type < 0 || !e->has_ts || !e->pid_is_num) {
		/* Flows, counters, spans and categories the analysis has no use for. */
		in->ignored += e->ph[0] != '\0';
		in->skipped += e->ph[0] == '\0';
		return 1;
	}
	struct isc_ev *ev = isc_trace_push(rc->t);
	if (ev == NULL) {
		return fail(r, "out of memory");
	}
	ev->type = (uint8_t)type;
	ev->name = e->name;
	ev->ts = e->ts;
	ev->dur = e->has_dur && e->dur > 0 ? e->dur : 0;
	ev->input = rc->input;
	if (isc_type_is_gpu((unsigned)type)) {
		if (gpu_event(rc, e, name, ev) < 0) {
			return fail(r, "out of memory");
		}
	} else {
		ev->thread = isc_trace_thread(rc->t, rc->input, e->tid);
		if (ev->thread == UINT32_MAX) {
			return fail(r, "out of memory");
		}
		if (in->pid == 0) {
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
			r->seen_events = true;
			return push(r, KF_EVENTS);
		}
		return push(r, KF_TOP);
	case KF_TOP:
		if (r->key == KK_TRACE_EVENTS) {
			if (is_map) {
				return fail(r, "traceEvents: expected an array, got an object");
			}
			r->seen_events = true;
			return push(r, KF_EVENTS);
		}
		return push(r, r->key == KK_DEVICE_PROPS && !is_map ? KF_DEVS : KF_SKIP);
	case KF_EVENTS:
		if (!is_map) {
			r->n_events++;
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

ISC_JSAX_CALLBACKS(callbacks, on_open, on_close, on_key, on_value);

static int read_kineto(struct isc_read_ctx *rc)
{
	struct krd *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		isc_diag_set(rc->diag, "%s: out of memory", rc->label);
		return -ENOMEM;
	}
	r->rc = rc;
	r->key = -1;
	r->cap_what = -1;
	isc_keymap_build(&r->keys, kdefs, sizeof(kdefs) / sizeof(kdefs[0]));
	snprintf(rc->t->inputs[rc->input].format_version,
		 sizeof(rc->t->inputs[rc->input].format_version), "chrome");
	int ret = isc_jsax_init(&r->js, &callbacks, r, rc->label, rc->diag);
	if (ret == 0) {
		ret = isc_jsax_run(&r->js, rc->src);
	}
	if (ret == 0 && !r->seen_events) {
		isc_diag_set(rc->diag, "%s: byte 0: no \"traceEvents\" array", rc->label);
		ret = -EINVAL;
	}
	isc_jsax_finish(&r->js);
	free(isc_jcap_take(&r->cap));
	free(r);
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
