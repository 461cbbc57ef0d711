/* SPDX-License-Identifier: MIT */
/*
 * Metrics of a segment, folded per process, and their exposition. Labels are the host,
 * the pid, the GPU and a category from a closed set (breakdown categories, verdict
 * states, kernel classes): a fleet's series stay bounded whatever its programs run.
 */
#include "watch/metrics.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <string.h>

#include "analyzer/base/interval.h"

/* The slot of a device in the segment's table, added on first use; NULL when full. */
static int gpu_slot(struct isc_segment_metrics *m, int device)
{
	for (size_t i = 0; i < m->n_gpus; i++) {
		if (m->gpu[i].device == device) {
			return (int)i;
		}
	}
	if (m->n_gpus == ISC_WATCH_GPUS) {
		return -1;
	}
	memset(&m->gpu[m->n_gpus], 0, sizeof(m->gpu[0]));
	m->gpu[m->n_gpus].device = device;
	return (int)m->n_gpus++;
}

/* GPU busy per device: the union of its operations inside the window. */
static int gpu_busy(const struct isc_trace *t, const struct isc_analysis *a,
		    struct isc_segment_metrics *m)
{
	struct isc_ivec busy[ISC_WATCH_GPUS];
	memset(busy, 0, sizeof(busy));
	int rc = 0;
	for (size_t i = 0; i < t->n && rc == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (!isc_type_is_gpu(e->type) || e->type == ISC_T_GPU_SYNC ||
		    !isc_in_window(t, a, e)) {
			continue;
		}
		int g = gpu_slot(m, e->device);
		if (g < 0) {
			continue;
		}
		int64_t end = isc_window_end_of(a, e);
		rc = isc_ivec_add(&busy[g], e->ts, e->ts + e->dur, a->window.start, end);
		int64_t s = e->ts > a->window.start ? e->ts : a->window.start;
		int64_t f = e->ts + e->dur < end ? e->ts + e->dur : end;
		if (f > s) {
			enum isc_kclass c = isc_gpu_op_class(e->type, isc_trace_str(t, e->name));
			m->gpu[g].ns[c] += (double)(f - s);
		}
	}
	for (size_t g = 0; g < m->n_gpus; g++) {
		if (rc == 0) {
			rc = isc_ivec_union(&busy[g]);
			m->gpu[g].busy_ns = (double)isc_ivec_total(&busy[g]);
		}
		isc_ivec_free(&busy[g]);
	}
	return rc;
}

int isc_segment_metrics(const struct isc_trace *t, const struct isc_analysis *a,
			struct isc_segment_metrics *m)
{
	memset(m, 0, sizeof(*m));
	const struct isc_input *in = t->n_inputs > 0 ? &t->inputs[0] : NULL;
	if (in != NULL && in->hostname != 0) {
		snprintf(m->host, sizeof(m->host), "%s", isc_trace_str(t, in->hostname));
	}
	m->pid = in != NULL ? in->pid : 0;
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		m->share[c] = isc_share(a, a->cat_ns[c]);
	}
	m->bound = a->verdict.type;
	m->confidence = a->verdict.confidence;
	int64_t win = a->window.end - a->window.start;
	m->window_s = win > 0 ? (double)win / 1e9 : 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type != ISC_T_CUDA_API || !isc_in_window(t, a, e)) {
			continue;
		}
		m->launches += e->sub == ISC_AC_LAUNCH;
		m->syncs += e->sub == ISC_AC_SYNC;
		m->device_allocs += e->sub == ISC_AC_MALLOC;
	}
	m->allocs_per_s = m->window_s > 0 ? (double)m->device_allocs / m->window_s : 0;
	m->dropped = a->dropped + a->cupti_dropped;
	if (in != NULL && in->has_anchor) {
		m->end_realtime_s =
			(double)(a->window.end - in->anchor_mono_ns + in->anchor_real_ns) / 1e9;
	}
	return gpu_busy(t, a, m) < 0 ? -ENOMEM : 0;
}

void isc_proc_update(struct isc_proc_metrics *p, const struct isc_segment_metrics *m)
{
	p->last = *m;
	p->segments++;
	p->launches_total += m->launches;
	p->syncs_total += m->syncs;
	p->device_allocs_total += m->device_allocs;
	p->dropped_total += m->dropped;
	for (size_t g = 0; g < p->n_gpus; g++) {
		p->gpu[g].seen_latest = false;
		p->gpu[g].busy_ratio = 0;
		memset(p->gpu[g].seconds_segment, 0, sizeof(p->gpu[g].seconds_segment));
	}
	for (size_t i = 0; i < m->n_gpus; i++) {
		size_t g = 0;
		while (g < p->n_gpus && p->gpu[g].device != m->gpu[i].device) {
			g++;
		}
		if (g == p->n_gpus) {
			if (p->n_gpus == ISC_WATCH_GPUS) {
				continue;
			}
			memset(&p->gpu[g], 0, sizeof(p->gpu[g]));
			p->gpu[g].device = m->gpu[i].device;
			p->n_gpus++;
		}
		struct isc_gpu_metrics *gm = &p->gpu[g];
		gm->seen_latest = true;
		gm->busy_ratio = m->window_s > 0 ? m->gpu[i].busy_ns / (m->window_s * 1e9) : 0;
		for (int c = 0; c < ISC_KC__COUNT; c++) {
			gm->seconds_segment[c] = m->gpu[i].ns[c] / 1e9;
			gm->seconds_total[c] += m->gpu[i].ns[c] / 1e9;
		}
	}
}

/* ---- exposition ---- */

struct expo {
	FILE *f;
	bool om; /* OpenMetrics; else text 0.0.4 */
};

/* A label value: backslash, quote and newline escaped (both formats agree). */
static void label_value(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"') {
			fputc('\\', f);
			fputc(*s, f);
		} else if (*s == '\n') {
			fputs("\\n", f);
		} else {
			fputc(*s, f);
		}
	}
}

/* "# HELP" and "# TYPE"; a counter's family is named without "_total" in OpenMetrics
 * and with it in 0.0.4, a stateset is a gauge in 0.0.4. */
static void family(const struct expo *x, const char *name, const char *type, const char *help)
{
	bool counter = strcmp(type, "counter") == 0;
	const char *t = !x->om && strcmp(type, "stateset") == 0 ? "gauge" : type;
	const char *suffix = counter && !x->om ? "_total" : "";
	fprintf(x->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, t);
}

static void proc_labels(FILE *f, const struct isc_proc_metrics *p)
{
	fputs("host=\"", f);
	label_value(f, p->host);
	fprintf(f, "\",pid=\"%" PRId64 "\"", p->pid);
}

static void gpu_label(FILE *f, int device)
{
	if (device >= 0) {
		fprintf(f, ",gpu=\"%d\"", device);
	} else {
		fputs(",gpu=\"unknown\"", f);
	}
}

/* %.17g round-trips; integers print without an exponent. */
static void value(FILE *f, double v)
{
	fprintf(f, " %.17g\n", v);
}

static void breakdown(const struct expo *x, const struct isc_proc_metrics *p, size_t n)
{
	family(x, "inferscope_breakdown_ratio", "gauge",
	       "Share of the latest segment's window by category (the categories sum to 1).");
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < ISC_CAT__COUNT; k++) {
			enum isc_category c = isc_category_order[k];
			fputs("inferscope_breakdown_ratio{", x->f);
			proc_labels(x->f, &p[i]);
			fprintf(x->f, ",category=\"%s\"}", isc_category_name(c));
			value(x->f, p[i].last.share[c]);
		}
	}
	family(x, "inferscope_verdict", "stateset",
	       "The latest segment's verdict: 1 for the state it is, 0 for the others.");
	for (size_t i = 0; i < n; i++) {
		for (int b = ISC_BOUND_UNKNOWN; b < ISC_BOUND__COUNT; b++) {
			fputs("inferscope_verdict{", x->f);
			proc_labels(x->f, &p[i]);
			fprintf(x->f, ",inferscope_verdict=\"%s\"}",
				isc_bound_name((enum isc_bound)b));
			value(x->f, p[i].last.bound == (enum isc_bound)b ? 1 : 0);
		}
	}
	family(x, "inferscope_verdict_confidence", "gauge",
	       "Confidence of the latest segment's verdict, 0 to 1.");
	for (size_t i = 0; i < n; i++) {
		fputs("inferscope_verdict_confidence{", x->f);
		proc_labels(x->f, &p[i]);
		fputs("}", x->f);
		value(x->f, p[i].last.confidence);
	}
}

static void gpus(const struct expo *x, const struct isc_proc_metrics *p, size_t n)
{
	family(x, "inferscope_gpu_busy_ratio", "gauge",
	       "Share of the latest segment's window in which the GPU ran any work.");
	for (size_t i = 0; i < n; i++) {
		for (size_t g = 0; g < p[i].n_gpus; g++) {
			fputs("inferscope_gpu_busy_ratio{", x->f);
			proc_labels(x->f, &p[i]);
			gpu_label(x->f, p[i].gpu[g].device);
			fputs("}", x->f);
			value(x->f, p[i].gpu[g].busy_ratio);
		}
	}
	family(x, "inferscope_gpu_seconds", "counter",
	       "GPU time by kernel category (gemm, attention, communication, elementwise, "
	       "copy, other), summed over the analysed segments.");
	for (size_t i = 0; i < n; i++) {
		for (size_t g = 0; g < p[i].n_gpus; g++) {
			for (int c = 0; c < ISC_KC__COUNT; c++) {
				fputs("inferscope_gpu_seconds_total{", x->f);
				proc_labels(x->f, &p[i]);
				gpu_label(x->f, p[i].gpu[g].device);
				fprintf(x->f, ",category=\"%s\"}",
					isc_kclass_name((enum isc_kclass)c));
				value(x->f, p[i].gpu[g].seconds_total[c]);
			}
		}
	}
}

/* A per-process counter (OpenMetrics: family without _total, samples with it). */
static void proc_counter(const struct expo *x, const struct isc_proc_metrics *p, size_t n,
			 const char *name, const char *help, size_t offset)
{
	family(x, name, "counter", help);
	for (size_t i = 0; i < n; i++) {
		fprintf(x->f, "%s_total{", name);
		proc_labels(x->f, &p[i]);
		fputs("}", x->f);
		value(x->f, (double)*(const uint64_t *)((const char *)&p[i] + offset));
	}
}

/* A per-process gauge of the latest segment. */
static void proc_gauge(const struct expo *x, const struct isc_proc_metrics *p, size_t n,
		       const char *name, const char *help, size_t offset)
{
	family(x, name, "gauge", help);
	for (size_t i = 0; i < n; i++) {
		fprintf(x->f, "%s{", name);
		proc_labels(x->f, &p[i]);
		fputs("}", x->f);
		value(x->f, *(const double *)((const char *)&p[i].last + offset));
	}
}

static void counts(const struct expo *x, const struct isc_proc_metrics *p, size_t n)
{
	proc_counter(x, p, n, "inferscope_cuda_launches", "Kernel launch calls.",
		     offsetof(struct isc_proc_metrics, launches_total));
	proc_counter(x, p, n, "inferscope_cuda_syncs", "Synchronising calls.",
		     offsetof(struct isc_proc_metrics, syncs_total));
	proc_counter(x, p, n, "inferscope_device_allocations", "Device allocation calls.",
		     offsetof(struct isc_proc_metrics, device_allocs_total));
	proc_counter(x, p, n, "inferscope_dropped_events",
		     "Events the recorder dropped (its memory cap, CUPTI records lost).",
		     offsetof(struct isc_proc_metrics, dropped_total));
	proc_counter(x, p, n, "inferscope_segments", "Segments analysed.",
		     offsetof(struct isc_proc_metrics, segments));
	proc_gauge(x, p, n, "inferscope_device_allocations_per_second",
		   "Device allocation calls per second in the latest segment.",
		   offsetof(struct isc_segment_metrics, allocs_per_s));
	proc_gauge(x, p, n, "inferscope_window_seconds",
		   "Length of the latest segment's analysed window.",
		   offsetof(struct isc_segment_metrics, window_s));
	proc_gauge(x, p, n, "inferscope_segment_end_timestamp_seconds",
		   "Wall-clock end of the latest segment (0 when the segment has no clock anchor).",
		   offsetof(struct isc_segment_metrics, end_realtime_s));
}

static void self_metrics(const struct expo *x, const struct isc_watch_self *s)
{
	family(x, "inferscope_watch_segments", "counter",
	       "Segments the watcher read, by result (analysed, failed).");
	fprintf(x->f, "inferscope_watch_segments_total{result=\"analysed\"}");
	value(x->f, (double)s->analysed);
	fprintf(x->f, "inferscope_watch_segments_total{result=\"failed\"}");
	value(x->f, (double)s->failed);
	family(x, "inferscope_watch_analysis_seconds", "counter",
	       "Wall time the watcher spent reading and analysing segments.");
	fprintf(x->f, "inferscope_watch_analysis_seconds_total");
	value(x->f, s->analysis_seconds);
	family(x, "inferscope_watch_events", "counter", "Events read from analysed segments.");
	fprintf(x->f, "inferscope_watch_events_total");
	value(x->f, (double)s->events);
}

void isc_metrics_write(FILE *f, const struct isc_proc_metrics *procs, size_t n,
		       const struct isc_watch_self *self, bool openmetrics)
{
	struct expo x = { f, openmetrics };
	if (n > 0) {
		breakdown(&x, procs, n);
		gpus(&x, procs, n);
		counts(&x, procs, n);
	}
	self_metrics(&x, self);
	if (openmetrics) {
		fputs("# EOF\n", f);
	}
}
