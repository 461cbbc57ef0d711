/* SPDX-License-Identifier: MIT */
/*
 * The host side of the timeline: when a thread computes, which scope it computes in,
 * and which of its waits left the GPU idle.
 *
 * A thread computes inside its scopes (annotations, NVTX ranges, framework operators)
 * except while it is blocked in a wait it told us about (I/O, locks, sleeps). Where the
 * trace has CPU-time samples for a thread they decide instead: between two samples the
 * thread computes when its on-CPU time, plus the time it waited for a CPU (run-queue
 * wait: it wanted to run, the machine was busy), grew by at least the busy utilisation,
 * in scopes or not; waits are still taken out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analysis/timeline.h"
#include "analyzer/base/grow.h"
#include "analyzer/base/sort.h"

struct samples {
	int64_t *t;
	double *v;
	size_t n, cap;
};

struct thr {
	struct isc_ivec busy, waits, sampled;
	struct samples cpu, rq; /* cumulative on-CPU and run-queue time, us */
	bool feeds;		/* the thread calls CUDA: it feeds the GPU */
};

static bool is_wait(const struct isc_ev *e)
{
	return e->type == ISC_T_SYSCALL &&
	       (e->sub == ISC_SYS_IO || e->sub == ISC_SYS_NET || e->sub == ISC_SYS_WAIT ||
		e->sub == ISC_SYS_SLEEP || e->sub == ISC_SYS_FS);
}

static int add_sample(struct samples *s, int64_t ts, double v)
{
	if (s->n == s->cap) {
		/* Two arrays of one capacity. */
		size_t cap = isc_grow_cap(s->cap, s->n + 1, 64);
		if (ISC_RESIZE(s->t, cap) < 0 || ISC_RESIZE(s->v, cap) < 0) {
			return -ENOMEM;
		}
		s->cap = cap;
	}
	s->t[s->n] = ts;
	s->v[s->n++] = v;
	return 0;
}

/* A cumulative counter at time t: linear between samples, flat outside them. */
static double at(const struct samples *s, int64_t t)
{
	if (s->n == 0) {
		return 0;
	}
	if (t <= s->t[0]) {
		return s->v[0];
	}
	if (t >= s->t[s->n - 1]) {
		return s->v[s->n - 1];
	}
	size_t lo = 0, hi = s->n - 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->t[mid] <= t) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	int64_t dt = s->t[hi] - s->t[lo];
	double f = dt > 0 ? (double)(t - s->t[lo]) / (double)dt : 1.0;
	return s->v[lo] + f * (s->v[hi] - s->v[lo]);
}

static int gather(const struct isc_trace *t, const struct isc_analysis *a, struct thr *th)
{
	const int64_t ws = a->window.start, we = a->window.host_end;
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->thread >= t->n_threads) {
			continue;
		}
		struct thr *x = &th[e->thread];
		int64_t s = e->ts > ws ? e->ts : ws, en = e->ts + e->dur < we ? e->ts + e->dur : we;
		int r = 0;
		if (e->type == ISC_T_SCOPE || e->type == ISC_T_CPU_OP) {
			r = isc_ivec_add_merge(&x->busy, s, en);
		} else if (is_wait(e)) {
			r = isc_ivec_add_merge(&x->waits, s, en);
		} else if (e->type == ISC_T_COUNTER && e->sub == ISC_CTR_CPU_TIME) {
			r = add_sample(&x->cpu, e->ts, e->v.value);
		} else if (e->type == ISC_T_COUNTER && e->sub == ISC_CTR_WAIT_TIME) {
			r = add_sample(&x->rq, e->ts, e->v.value);
		}
		if (r < 0) {
			return r;
		}
	}
	return 0;
}

/* Busy intervals from CPU-time samples, plus scope time outside the sampled span. */
static int from_samples(struct thr *x, const struct isc_analysis *a)
{
	double util = isc_thr(&a->th, ISC_THR_CPU_BUSY_UTIL);
	const int64_t ws = a->window.start, we = a->window.host_end;
	const struct samples *s = &x->cpu;
	for (size_t i = 0; i + 1 < s->n; i++) {
		int64_t dt = s->t[i + 1] - s->t[i];
		double wanted =
			(s->v[i + 1] - s->v[i]) + (at(&x->rq, s->t[i + 1]) - at(&x->rq, s->t[i]));
		if (dt > 0 && wanted * 1000.0 >= util * (double)dt &&
		    isc_ivec_add(&x->sampled, s->t[i], s->t[i + 1], ws, we) < 0) {
			return -ENOMEM;
		}
	}
	int64_t lo = s->t[0], hi = s->t[s->n - 1];
	for (size_t i = 0; i < x->busy.n; i++) {
		if (isc_ivec_add(&x->sampled, x->busy.v[i].s, x->busy.v[i].e, INT64_MIN, lo) < 0 ||
		    isc_ivec_add(&x->sampled, x->busy.v[i].s, x->busy.v[i].e, hi, INT64_MAX) < 0) {
			return -ENOMEM;
		}
	}
	if (isc_ivec_union(&x->sampled) < 0) {
		return -ENOMEM;
	}
	isc_ivec_free(&x->busy);
	x->busy = x->sampled;
	memset(&x->sampled, 0, sizeof(x->sampled));
	return 0;
}

int isc_host_busy(const struct isc_trace *t, struct isc_analysis *a, struct isc_ivec *host)
{
	struct thr *th = calloc(t->n_threads + 1, sizeof(*th));
	if (th == NULL) {
		return -ENOMEM;
	}
	int r = gather(t, a, th);
	for (size_t k = 0; k < t->n_threads && r == 0; k++) {
		struct thr *x = &th[k];
		if (x->cpu.n >= 2) {
			a->cpu_samples = true;
			a->sampled_threads++;
			r = from_samples(x, a);
		}
		r = r == 0 ? isc_ivec_union(&x->waits) : r;
		r = r == 0 ? isc_ivec_subtract(host, &x->busy, &x->waits) : r;
	}
	r = r == 0 ? isc_ivec_union(host) : r;
	for (size_t k = 0; k < t->n_threads; k++) {
		isc_ivec_free(&th[k].busy);
		isc_ivec_free(&th[k].waits);
		isc_ivec_free(&th[k].sampled);
		free(th[k].cpu.t);
		free(th[k].cpu.v);
		free(th[k].rq.t);
		free(th[k].rq.v);
	}
	free(th);
	return r;
}

struct frame {
	int64_t end, cursor;
	uint32_t name;
};

struct stack {
	struct frame *v;
	size_t n, cap;
};

struct scope_acc {
	const struct isc_analysis *a;
	const struct isc_ivec *cpu;
	struct isc_scope_time *by_name;
};

static void emit(struct scope_acc *acc, uint32_t name, int64_t s, int64_t e)
{
	s = s > acc->a->window.start ? s : acc->a->window.start;
	e = e < acc->a->window.host_end ? e : acc->a->window.host_end;
	if (e > s) {
		acc->by_name[name].self += e - s;
		acc->by_name[name].cpu += isc_ivec_overlap(acc->cpu, s, e);
	}
}

/* Pops frames that ended by `until`, crediting each its remaining self time. */
static void unwind(struct scope_acc *acc, struct stack *st, int64_t until)
{
	while (st->n > 0 && st->v[st->n - 1].end <= until) {
		struct frame f = st->v[--st->n];
		emit(acc, f.name, f.cursor, f.end);
		if (st->n > 0) {
			st->v[st->n - 1].cursor = f.end;
		}
	}
}

static int scope_event(struct scope_acc *acc, struct stack *st, const struct isc_ev *e)
{
	unwind(acc, st, e->ts);
	int64_t end = e->ts + e->dur;
	if (st->n > 0) {
		struct frame *parent = &st->v[st->n - 1];
		emit(acc, parent->name, parent->cursor, e->ts);
		parent->cursor = e->ts;
		end = end < parent->end ? end : parent->end; /* badly nested: clamp */
	}
	if (ISC_GROW(st->v, st->cap, st->n + 1, 16) < 0) {
		return -ENOMEM;
	}
	st->v[st->n++] = (struct frame){ .end = end, .cursor = e->ts, .name = e->name };
	acc->by_name[e->name].count++;
	acc->by_name[e->name].total += e->dur;
	return 0;
}

static int cmp_scope(const void *x, const void *y)
{
	const struct isc_scope_time *a = x, *b = y;
	if (a->cpu != b->cpu) {
		return a->cpu > b->cpu ? -1 : 1;
	}
	if (a->self != b->self) {
		return a->self > b->self ? -1 : 1;
	}
	return (a->name > b->name) - (a->name < b->name);
}

static int collect_scopes(struct isc_analysis *a, struct isc_scope_time *by, size_t ns)
{
	size_t n = 0;
	for (size_t i = 0; i < ns; i++) {
		n += by[i].count > 0;
	}
	a->scopes = calloc(n + 1, sizeof(*a->scopes));
	if (a->scopes == NULL) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < ns; i++) {
		if (by[i].count > 0) {
			by[i].name = (uint32_t)i;
			a->scopes[a->n_scopes++] = by[i];
		}
	}
	isc_qsort(a->scopes, a->n_scopes, sizeof(*a->scopes), cmp_scope);
	for (size_t i = 0; i < ISC_EXAMPLES && i < a->n_scopes && a->scopes[i].cpu > 0; i++) {
		a->examples[ISC_CAT_CPU][i] =
			(struct isc_named_ns){ a->scopes[i].name, a->scopes[i].cpu };
	}
	return 0;
}

int isc_scope_times(const struct isc_trace *t, struct isc_analysis *a, const struct isc_ivec *cpu)
{
	size_t ns = isc_trace_n_strings(t);
	struct scope_acc acc = { .a = a, .cpu = cpu, .by_name = calloc(ns, sizeof(*acc.by_name)) };
	struct stack *st = calloc(t->n_threads + 1, sizeof(*st));
	int r = acc.by_name == NULL || st == NULL ? -ENOMEM : 0;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_SCOPE && e->thread < t->n_threads) {
			r = scope_event(&acc, &st[e->thread], e);
		}
	}
	for (size_t k = 0; st != NULL && k < t->n_threads; k++) {
		if (r == 0) {
			unwind(&acc, &st[k], INT64_MAX);
		}
		free(st[k].v);
	}
	r = r == 0 ? collect_scopes(a, acc.by_name, ns) : r;
	free(st);
	free(acc.by_name);
	return r;
}

/*
 * Which threads' waits can explain GPU idle time: the threads that call CUDA (they feed
 * the GPU), or every thread when none does. A helper thread parked on a condition
 * variable while the feeding thread works is not what the GPU waits for.
 */
static bool *feeding_threads(const struct isc_trace *t)
{
	bool *feeds = calloc(t->n_threads + 1, sizeof(*feeds));
	bool any = false;
	for (size_t i = 0; feeds != NULL && i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_CUDA_API && e->thread < t->n_threads) {
			feeds[e->thread] = any = true;
		}
	}
	for (size_t k = 0; feeds != NULL && !any && k < t->n_threads; k++) {
		feeds[k] = true;
	}
	return feeds;
}

/* The part of a disjoint list the idle list covers. */
static int64_t idle_overlap(const struct isc_ivec *idle, const struct isc_ivec *u)
{
	int64_t o = 0;
	for (size_t i = 0; i < u->n; i++) {
		o += isc_ivec_overlap(idle, u->v[i].s, u->v[i].e);
	}
	return o;
}

/*
 * Waits per category: count, the time they cover and the part of it with the GPU idle.
 * Both times are unions over threads (two threads waiting at once count once), so that
 * they are shares of the window; the names that fill the most of each category are
 * found by the summed time, then measured the same way.
 */
int isc_wait_times(const struct isc_trace *t, struct isc_analysis *a, const struct isc_ivec *idle)
{
	size_t ns = isc_trace_n_strings(t);
	int64_t *on_idle = calloc(ns * 8, sizeof(*on_idle));
	if (on_idle == NULL) {
		return -ENOMEM;
	}
	const int64_t ws = a->window.start, we = a->window.host_end;
	int64_t *any = calloc(ns, sizeof(*any));
	bool *feeds = feeding_threads(t);
	struct isc_ivec slot_iv[8] = { 0 }, top_iv[8] = { 0 }, ex_iv[ISC_EXAMPLES] = { 0 };
	struct isc_ivec io = { 0 };
	int r = any == NULL || feeds == NULL ? -ENOMEM : 0;
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		for (size_t i = 0; i < t->n && r == 0; i++) {
			const struct isc_ev *e = &t->ev[i];
			int64_t s = e->ts > ws ? e->ts : ws;
			int64_t en = e->ts + e->dur < we ? e->ts + e->dur : we;
			if (!is_wait(e) || en <= s || e->thread >= t->n_threads ||
			    !feeds[e->thread]) {
				continue;
			}
			unsigned slot = isc_wait_slot(e);
			if (pass == 0) {
				int64_t o = isc_ivec_overlap(idle, s, en);
				a->waits.count[slot]++;
				on_idle[(size_t)slot * ns + e->name] += o;
				any[e->name] += o;
				r = isc_ivec_add(&slot_iv[slot], s, en, INT64_MIN, INT64_MAX);
				bool io_slot = slot == ISC_SYS_IO || slot == ISC_SYS_NET ||
					       slot == ISC_SYS_FS;
				r = r == 0 && io_slot
					    ? isc_ivec_add(&io, s, en, INT64_MIN, INT64_MAX)
					    : r;
				continue;
			}
			if (a->waits.top[slot].name == e->name && a->waits.top[slot].ns > 0) {
				r = isc_ivec_add(&top_iv[slot], s, en, INT64_MIN, INT64_MAX);
			}
			for (int k = 0; k < ISC_EXAMPLES && r == 0; k++) {
				const struct isc_named_ns *x = &a->examples[ISC_CAT_IDLE][k];
				r = x->ns > 0 && x->name == e->name
					    ? isc_ivec_add(&ex_iv[k], s, en, INT64_MIN, INT64_MAX)
					    : 0;
			}
		}
		if (r != 0) {
			break;
		}
		for (int c = 0; c < 8 && r == 0; c++) {
			if (pass == 0) {
				isc_top_names(on_idle + (size_t)c * ns, ns, &a->waits.top[c], 1);
				r = isc_ivec_union(&slot_iv[c]);
				a->waits.total[c] = isc_ivec_total(&slot_iv[c]);
				a->waits.on_idle[c] = idle_overlap(idle, &slot_iv[c]);
			} else if ((r = isc_ivec_union(&top_iv[c])) == 0) {
				a->waits.top[c].ns = idle_overlap(idle, &top_iv[c]);
			}
		}
		if (pass == 0 && r == 0 && (r = isc_ivec_union(&io)) == 0) {
			isc_top_names(any, ns, a->examples[ISC_CAT_IDLE], ISC_EXAMPLES);
			a->waits.io_total = isc_ivec_total(&io);
			a->waits.io_on_idle = idle_overlap(idle, &io);
		}
		for (int k = 0; pass == 1 && k < ISC_EXAMPLES && r == 0; k++) {
			r = isc_ivec_union(&ex_iv[k]);
			a->examples[ISC_CAT_IDLE][k].ns = idle_overlap(idle, &ex_iv[k]);
		}
	}
	for (int c = 0; c < 8; c++) {
		isc_ivec_free(&slot_iv[c]);
		isc_ivec_free(&top_iv[c]);
	}
	for (int k = 0; k < ISC_EXAMPLES; k++) {
		isc_ivec_free(&ex_iv[k]);
	}
	isc_ivec_free(&io);
	free(feeds);
	free(any);
	free(on_idle);
	return r;
}
