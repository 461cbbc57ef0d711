/* SPDX-License-Identifier: MIT */
/* Allocation family: device allocations in the steady state, host allocation churn. */
#include <math.h>
#include <string.h>

#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/model/stacks.h"
#include "analyzer/rules/rules.h"

static bool device_steady(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	const struct isc_ivec *ops = isc_rules_gpu_ops(c);
	int64_t warm = a->window.start +
		       (int64_t)(isc_thr(&a->th, ISC_THR_WARMUP_FRACTION) * c->window_ns);
	uint64_t n = 0;
	int64_t ns = 0, idle = 0;
	uint32_t top = 0;
	for (size_t i = 0; i < c->n_list[ISC_RL_ALLOC_API]; i++) {
		const struct isc_ev *e = isc_rules_ev(c, ISC_RL_ALLOC_API, i);
		if (e->ts < warm) {
			continue;
		}
		n++;
		ns += e->dur;
		/* cudaFree waits for the device; only the part with the GPU idle is lost. */
		idle += e->dur - isc_ivec_overlap(ops, e->ts, e->ts + e->dur);
		top = e->sub == ISC_AC_MALLOC || top == 0 ? e->name : top;
	}
	if (n < isc_thr(&a->th, ISC_THR_ALLOC_MIN_COUNT)) {
		return false;
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Stop allocating device memory in the "
		      "steady state (%s): reuse buffers across iterations, use a caching "
		      "allocator or cudaMallocAsync with a memory pool",
		      isc_trace_str(c->t, top));
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "cudaMalloc and cudaFree are slow "
		      "driver calls and cudaFree synchronises the device, so every iteration "
		      "pays them and drains the GPU");
	isc_sugg_evidence(s, "%llu device allocation/free calls after the warm-up take %s",
			  (unsigned long long)n, isc_fmt_dur(b1, (double)ns));
	isc_sugg_evidence(s, "the GPU is idle for %s of that time (%s of the window)",
			  isc_fmt_dur(b1, (double)idle),
			  isc_fmt_pct(b2, c->window_ns > 0 ? (double)idle / c->window_ns : 0));
	struct isc_change ch = { .op = ISC_WI_NO_WAIT,
				 .sel = ISC_SEL_API_CLASS,
				 .sub = (1u << ISC_AC_MALLOC) | (1u << ISC_AC_FREE),
				 .after = warm };
	s->improvement_pct = isc_sugg_simulate(
		c, &ch, s, "no device allocation or free after the warm-up (buffers reused)");
	return true;
}

/* A CPU sample taken inside the allocator: a frame of the malloc family on its stack. */
static bool in_allocator(const struct isc_trace *t, const struct isc_ev *e)
{
	static const char *const fns[] = { "malloc",	    "free",	    "calloc",
					   "realloc",	    "_int_malloc",  "_int_free",
					   "cfree",	    "operator new", "operator delete",
					   "posix_memalign" };
	struct isc_stack_ref r;
	if (e->type != ISC_T_CPU_SAMPLE || !isc_stack_of(t, e, &r)) {
		return false;
	}
	for (size_t i = 0; i < r.n; i++) {
		const char *f = isc_trace_str(t, isc_stack_frame(&r, i)->function);
		for (size_t k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
			if (strncmp(f, fns[k], strlen(fns[k])) == 0 &&
			    (f[strlen(fns[k])] == '\0' || f[strlen(fns[k])] == '(')) {
				return true;
			}
		}
	}
	return false;
}

static double allocator_samples(const struct isc_trace *t, const struct isc_ev *e, const void *arg)
{
	(void)arg;
	return in_allocator(t, e) ? 0.0 : -1.0;
}

/*
 * Host allocation churn, from the exact counters the malloc hooks keep per thread (the
 * trailer's aggregates: every call, not the sampled events): calls and bytes per second
 * of the time they cover. What the allocator costs comes from the CPU samples taken
 * inside it; the estimate is the run re-timed without them (the allocations reused).
 */
static bool host_churn(struct isc_rule_ctx *c, struct isc_suggestion *s)
{
	const struct isc_analysis *a = c->a;
	const struct isc_trace *t = c->t;
	uint64_t calls = 0, bytes = 0;
	int64_t span = 0;
	for (size_t i = 0; i < t->n_inputs; i++) {
		const struct isc_input *in = &t->inputs[i];
		calls += in->malloc_calls;
		bytes += in->malloc_bytes;
		int64_t d = in->meta_end_ns - in->meta_start_ns;
		span = d > span ? d : span;
	}
	/* The counters cover each process's whole recording; a window cut from it has no
	 * count of its own, so the rate is of the longest recording. */
	double secs = (span > 0 ? (double)span : c->window_ns) / 1e9;
	double rate = secs > 0 ? (double)calls / secs : 0;
	if (calls == 0 || rate < isc_thr(&a->th, ISC_THR_MALLOC_RATE)) {
		return false;
	}
	int64_t alloc_cpu = 0, cpu = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_CPU_SAMPLE && isc_in_window(t, a, e)) {
			cpu += (int64_t)e->v.bytes;
			alloc_cpu += in_allocator(t, e) ? (int64_t)e->v.bytes : 0;
		}
	}
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	isc_sugg_text(s->action, sizeof(s->action),
		      "Reduce host allocation churn: reuse buffers and objects across requests "
		      "or iterations, preallocate, or use a faster allocator "
		      "(jemalloc/tcmalloc)");
	isc_sugg_text(s->rationale, sizeof(s->rationale),
		      "Hundreds of thousands of small allocations per second cost CPU time in "
		      "the allocator and fragment the heap; the count is exact (the malloc "
		      "hooks' counters), the cost is the CPU samples taken inside the allocator");
	isc_sugg_evidence(s, "%llu host allocations (%s requested) in %s: %.0f per second, %s/s",
			  (unsigned long long)calls, isc_fmt_bytes(b1, (double)bytes),
			  isc_fmt_dur(b2, secs * 1e9), rate,
			  isc_fmt_bytes(b3, secs > 0 ? (double)bytes / secs : 0));
	if (cpu > 0) {
		isc_sugg_evidence(s, "%s of the sampled CPU time (%s) is inside the allocator",
				  isc_fmt_pct(b1, (double)alloc_cpu / (double)cpu),
				  isc_fmt_dur(b2, (double)alloc_cpu));
	}
	struct isc_change ch = { .op = ISC_WI_SCALE,
				 .sel = ISC_SEL_CALLBACK,
				 .factor = 0,
				 .after = INT64_MIN,
				 .scale_of = allocator_samples };
	s->improvement_pct =
		alloc_cpu > 0 ? isc_sugg_simulate(c, &ch, s, "no CPU time in the allocator") : 0;
	return true;
}

const struct isc_rule isc_rules_alloc[] = {
	{ "alloc.device-steady-state",
	  "device allocation in the steady state: caching "
	  "allocator or cudaMallocAsync pools",
	  false, device_steady },
	{ "alloc.host-churn",
	  "host allocation churn (exact counts, allocator CPU from samples): reuse buffers or a "
	  "faster allocator",
	  true, host_churn },
	{ NULL, NULL, false, NULL },
};
