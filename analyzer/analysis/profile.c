/* SPDX-License-Identifier: MIT */
#include "analyzer/model/profile.h"
#include "analyzer/base/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *isc_pcat_name(enum isc_pcat c)
{
	static const char *const names[ISC_PC__COUNT] = {
		[ISC_PC_GPU_IDLE] = "cpu_preprocessing",
		[ISC_PC_CUDA] = "framework_overhead",
		[ISC_PC_BESIDE] = "gpu_compute",
		[ISC_PC_STARTUP] = "startup",
	};
	return c < ISC_PC__COUNT ? names[c] : "unknown";
}

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

bool isc_sample_is_startup(const struct isc_trace *t, const struct isc_stack_ref *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct isc_frame *f = isc_stack_frame(r, i);
		const char *fn = isc_trace_str(t, f->function);
		const char *file = isc_trace_str(t, f->kind == ISC_FK_PYTHON ? f->file : 0);
		if (starts(file, "<frozen importlib") || strstr(file, "importlib/_bootstrap") ||
		    starts(fn, "PyImport_") || starts(fn, "_PyImport_")) {
			return true;
		}
	}
	return false;
}

/* The loops of data-loading workers (docs/rules.md, "Workers"). */
static bool worker_frame(const struct isc_trace *t, const struct isc_frame *f)
{
	static const char *const sig[][2] = {
		{ "_worker_loop", "torch/utils/data/" },
		{ "worker", "multiprocessing/pool.py" },
		{ "_worker", "concurrent/futures/thread.py" },
		{ "_process_worker", "concurrent/futures/process.py" },
	};
	if (f->kind != ISC_FK_PYTHON) {
		return false;
	}
	const char *fn = isc_trace_str(t, f->function), *file = isc_trace_str(t, f->file);
	for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
		if (strcmp(fn, sig[i][0]) == 0 && strstr(file, sig[i][1]) != NULL) {
			return true;
		}
	}
	return false;
}

/* Whether f is a Python frame whose file path contains one of files[0..n). */
static bool python_file_in(const struct isc_trace *t, const struct isc_frame *f,
			   const char *const *files, size_t n)
{
	if (f->kind != ISC_FK_PYTHON) {
		return false;
	}
	const char *file = isc_trace_str(t, f->file);
	for (size_t i = 0; i < n; i++) {
		if (strstr(file, files[i]) != NULL) {
			return true;
		}
	}
	return false;
}

/* A framework running a model's layers (docs/rules.md, "Model code"): an nn.Module
 * call, a compiled or exported model's run. Samples under one are the model's own
 * compute, however the time is spent below it (BLAS, Python layers), not preprocessing. */
static bool model_frame(const struct isc_trace *t, const struct isc_frame *f)
{
	static const char *const files[] = {
		"torch/nn/modules/module.py",
		"torch/_dynamo/eval_frame.py",
		"torch/jit/_script.py",
		"onnxruntime/capi/onnxruntime_inference",
		"keras/src/layers/layer.py",
		"keras/engine/base_layer.py",
		"tensorflow/python/eager/polymorphic_function/",
		"flax/linen/module.py",
	};
	return python_file_in(t, f, files, sizeof(files) / sizeof(files[0]));
}

/* A data loader fetching a batch (docs/rules.md, "Data loading"): what runs below it
 * prepares the model's input. */
static bool loading_frame(const struct isc_trace *t, const struct isc_frame *f)
{
	static const char *const files[] = {
		"torch/utils/data/",
		"tensorflow/python/data/",
	};
	return python_file_in(t, f, files, sizeof(files) / sizeof(files[0]));
}

static bool worker_name(const char *name)
{
	return starts(name, "pt_data_worker") || starts(name, "DataLoader");
}

struct acc {
	const struct isc_trace *t;
	struct isc_profile *p;
	struct isc_wmap fns, lines, mods, thr_fn, sites;
	int64_t *line_self, *mod_self, *thr_fn_self, *site_w;
	size_t cap_fn, cap_lines, cap_mods, cap_thr_fn, cap_sites;
	uint64_t *stamp; /* sample number that last counted a function's total */
	uint64_t n;
};

static int fit(void **v, size_t *cap, size_t need, size_t size, bool zero)
{
	if (need <= *cap) {
		return 0;
	}
	size_t c = *cap ? *cap * 2 : 64;
	c = c < need ? need : c;
	char *p = realloc(*v, c * size);
	if (p == NULL) {
		return -ENOMEM;
	}
	if (zero) {
		memset(p + *cap * size, 0, (c - *cap) * size);
	}
	*v = p;
	*cap = c;
	return 0;
}

/* Index of the function of a frame, added when new. */
static size_t fn_of(struct acc *c, const struct isc_frame *f)
{
	bool added;
	uint32_t where = isc_frame_where(f);
	uint64_t a = (uint64_t)f->function | ((uint64_t)f->kind << 32);
	uint64_t b = f->function != 0 ? where : isc_frame_pos(f) ^ ((uint64_t)where << 40);
	size_t k = isc_wmap_get(&c->fns, a, b, &added);
	if (k == SIZE_MAX || !added) {
		return k;
	}
	size_t cap = c->cap_fn;
	if (fit((void **)&c->p->fn, &c->cap_fn, k + 1, sizeof(*c->p->fn), true) < 0 ||
	    fit((void **)&c->stamp, &cap, k + 1, sizeof(*c->stamp), true) < 0) {
		return SIZE_MAX;
	}
	struct isc_prof_fn *r = &c->p->fn[k];
	r->function = f->function;
	r->where = where;
	r->kind = f->kind;
	r->line = isc_frame_pos(f);
	c->p->n_fn = k + 1;
	return k;
}

static int add(struct isc_wmap *m, uint64_t a, uint64_t b, int64_t **v, size_t *cap, int64_t w)
{
	bool added;
	size_t k = isc_wmap_get(m, a, b, &added);
	if (k == SIZE_MAX || fit((void **)v, cap, k + 1, sizeof(**v), true) < 0) {
		return -ENOMEM;
	}
	(*v)[k] += w;
	return 0;
}

static int sample(struct acc *c, const struct isc_ev *e, const struct isc_stack_ref *r, int cat)
{
	struct isc_profile *p = c->p;
	int64_t w = (int64_t)e->v.bytes;
	bool steady = cat < ISC_PC_STEADY, model = false, loading = false;
	c->n++;
	p->samples++;
	p->total += w;
	p->cat[cat] += w;
	struct isc_prof_thread *th = &p->thr[e->thread];
	th->thread = e->thread;
	*(steady ? &th->steady : &th->startup) += w;
	for (size_t i = 0; i < r->n; i++) {
		const struct isc_frame *f = isc_stack_frame(r, i);
		size_t k = fn_of(c, f);
		if (k == SIZE_MAX) {
			return -ENOMEM;
		}
		th->worker |= worker_frame(c->t, f);
		model = model || model_frame(c->t, f);
		loading = loading || loading_frame(c->t, f);
		if (c->stamp[k] != c->n) {
			c->stamp[k] = c->n;
			p->fn[k].total[cat] += w;
		}
		if (i > 0) {
			continue;
		}
		p->fn[k].self[cat] += w;
		if (add(&c->lines, k, isc_frame_pos(f), &c->line_self, &c->cap_lines,
			steady ? w : 0) < 0 ||
		    add(&c->mods, isc_frame_where(f), 0, &c->mod_self, &c->cap_mods,
			steady ? w : 0) < 0 ||
		    add(&c->thr_fn, e->thread, k, &c->thr_fn_self, &c->cap_thr_fn, steady ? w : 0) <
			    0) {
			return -ENOMEM;
		}
	}
	if (cat == ISC_PC_GPU_IDLE && model) {
		p->idle_model += w; /* the model's own compute: not a preprocessing site */
		return 0;
	}
	p->idle_loading += cat == ISC_PC_GPU_IDLE && loading ? w : 0;
	int s = cat == ISC_PC_GPU_IDLE ? isc_stack_site(c->t, r, NULL) : -1;
	if (s >= 0) {
		const struct isc_frame *f = isc_stack_frame(r, (size_t)s);
		uint64_t a = (uint64_t)f->function | ((uint64_t)isc_frame_where(f) << 32);
		uint64_t b = (uint64_t)isc_frame_pos(f) | ((uint64_t)f->kind << 32);
		return add(&c->sites, a, b, &c->site_w, &c->cap_sites, w);
	}
	return 0;
}

/* Per input, the start of its first CUDA call: its samples before are start-up. */
static int64_t *first_cuda(const struct isc_trace *t)
{
	int64_t *first = malloc((t->n_inputs + 1) * sizeof(*first));
	if (first == NULL) {
		return NULL;
	}
	for (size_t i = 0; i <= t->n_inputs; i++) {
		first[i] = INT64_MIN;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_CUDA_API && first[e->input] == INT64_MIN) {
			first[e->input] = e->ts;
		}
	}
	return first;
}

static int pass(struct acc *c, const struct isc_analysis *a)
{
	const struct isc_trace *t = c->t;
	int64_t *first = first_cuda(t);
	int64_t *api_end = calloc(t->n_threads + 1, sizeof(*api_end));
	int r = first != NULL && api_end != NULL ? 0 : -ENOMEM;
	int64_t gpu_until = INT64_MIN;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_CUDA_API && e->thread < t->n_threads) {
			int64_t end = e->ts + e->dur;
			api_end[e->thread] = end > api_end[e->thread] ? end : api_end[e->thread];
		} else if (isc_type_is_gpu(e->type) && e->type != ISC_T_GPU_SYNC) {
			gpu_until = e->ts + e->dur > gpu_until ? e->ts + e->dur : gpu_until;
		}
		struct isc_stack_ref st;
		if (e->type != ISC_T_CPU_SAMPLE || e->ts < a->window.start ||
		    e->ts > a->window.end || e->thread >= t->n_threads ||
		    !isc_stack_of(t, e, &st)) {
			continue;
		}
		int cat = api_end[e->thread] > e->ts ? ISC_PC_CUDA
			  : gpu_until > e->ts	     ? ISC_PC_BESIDE
						     : ISC_PC_GPU_IDLE;
		if (e->ts < first[e->input] || isc_sample_is_startup(t, &st)) {
			cat = ISC_PC_STARTUP;
		}
		r = sample(c, e, &st, cat);
	}
	free(first);
	free(api_end);
	return r;
}

static int cmp_fn(const void *x, const void *y)
{
	const struct isc_prof_fn *a = x, *b = y;
	if (a->self_steady != b->self_steady) {
		return a->self_steady > b->self_steady ? -1 : 1;
	}
	if (a->total_steady != b->total_steady) {
		return a->total_steady > b->total_steady ? -1 : 1;
	}
	return a->function != b->function ? (a->function < b->function ? -1 : 1)
					  : (a->where < b->where ? -1 : a->where > b->where);
}

static int cmp_mod(const void *x, const void *y)
{
	const struct isc_prof_mod *a = x, *b = y;
	if (a->self != b->self) {
		return a->self > b->self ? -1 : 1;
	}
	return a->module < b->module ? -1 : a->module > b->module;
}

struct fn_pair {
	struct isc_prof_fn f; /* first member: cmp_fn compares pairs as rows */
	uint32_t old;
};

/* Best line per function, steady sums; then sorted, with old -> new index in *remap. */
static int order_fns(struct acc *c, uint32_t **remap)
{
	struct isc_profile *p = c->p;
	int64_t *best = calloc(p->n_fn + 1, sizeof(*best));
	struct fn_pair *pr = malloc((p->n_fn + 1) * sizeof(*pr));
	*remap = malloc((p->n_fn + 1) * sizeof(**remap));
	if (best == NULL || pr == NULL || *remap == NULL) {
		free(best);
		free(pr);
		return -ENOMEM;
	}
	for (size_t k = 0; k < c->lines.n; k++) {
		size_t fn = (size_t)c->lines.k1[k];
		if (c->line_self[k] > best[fn]) {
			best[fn] = c->line_self[k];
			p->fn[fn].line = (uint32_t)c->lines.k2[k];
		}
	}
	for (size_t k = 0; k < p->n_fn; k++) {
		struct isc_prof_fn *f = &p->fn[k];
		for (int cat = 0; cat < ISC_PC_STEADY; cat++) {
			f->self_steady += f->self[cat];
			f->total_steady += f->total[cat];
		}
		pr[k].f = *f;
		pr[k].old = (uint32_t)k;
	}
	isc_qsort(pr, p->n_fn, sizeof(*pr), cmp_fn);
	for (size_t k = 0; k < p->n_fn; k++) {
		p->fn[k] = pr[k].f;
		(*remap)[pr[k].old] = (uint32_t)k;
	}
	free(best);
	free(pr);
	return 0;
}

static int finish(struct acc *c)
{
	struct isc_profile *p = c->p;
	uint32_t *remap = NULL;
	int r = order_fns(c, &remap);
	if (r < 0) {
		free(remap);
		return r;
	}
	int64_t *top = calloc(p->n_thr + 1, sizeof(*top));
	for (size_t k = 0; top != NULL && k < c->thr_fn.n; k++) {
		struct isc_prof_thread *th = &p->thr[c->thr_fn.k1[k]];
		uint32_t fn = remap[c->thr_fn.k2[k]];
		int64_t w = c->thr_fn_self[k];
		if (w > top[c->thr_fn.k1[k]] ||
		    (w == top[c->thr_fn.k1[k]] && w > 0 && (int32_t)fn < th->top_fn)) {
			top[c->thr_fn.k1[k]] = w;
			th->top_fn = (int32_t)fn;
		}
	}
	free(top);
	free(remap);
	p->mod = calloc(c->mods.n + 1, sizeof(*p->mod));
	if (p->mod == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < c->mods.n; k++) {
		p->mod[p->n_mod++] =
			(struct isc_prof_mod){ (uint32_t)c->mods.k1[k], c->mod_self[k] };
	}
	isc_qsort(p->mod, p->n_mod, sizeof(*p->mod), cmp_mod);
	return 0;
}

/* A thread is a data worker by its name or by a worker loop in its stacks. */
static void workers(const struct isc_trace *t, struct isc_profile *p)
{
	uint32_t last_input = UINT32_MAX, by_stack = 0, by_name = 0;
	for (size_t i = 0; i < p->n_thr; i++) {
		struct isc_prof_thread *th = &p->thr[i];
		bool named = worker_name(isc_trace_str(t, t->threads[i].name));
		if (!th->worker && !named) {
			continue;
		}
		th->worker = true;
		p->worker_threads++;
		by_name += named;
		by_stack += !named;
		if (t->threads[i].input != last_input) {
			last_input = t->threads[i].input;
			p->worker_processes++;
		}
	}
	if (p->worker_threads > 0) {
		snprintf(p->workers_how, sizeof(p->workers_how),
			 "%u threads in %u processes, by %s", p->worker_threads,
			 p->worker_processes,
			 by_stack > 0 && by_name > 0 ? "worker-loop stacks and thread names"
			 : by_stack > 0		     ? "worker-loop stacks"
						     : "thread names");
	}
}

static void idle_site(const struct isc_trace *t, struct acc *c)
{
	struct isc_profile *p = c->p;
	int64_t best = 0;
	size_t bi = SIZE_MAX;
	for (size_t k = 0; k < c->sites.n; k++) {
		if (c->site_w[k] > best) {
			best = c->site_w[k];
			bi = k;
		}
	}
	if (bi == SIZE_MAX || p->cat[ISC_PC_GPU_IDLE] <= 0) {
		return;
	}
	struct isc_frame f =
		isc_frame_of_key((uint32_t)c->sites.k1[bi], (uint32_t)(c->sites.k1[bi] >> 32),
				 (uint8_t)(c->sites.k2[bi] >> 32), (uint32_t)c->sites.k2[bi]);
	isc_frame_text(t, &f, p->idle_site, sizeof(p->idle_site));
	p->idle_site_share = (double)best / (double)p->cat[ISC_PC_GPU_IDLE];
}

int isc_profile_build(const struct isc_trace *t, struct isc_analysis *a)
{
	bool any = false;
	for (size_t i = 0; i < t->n_inputs; i++) {
		any |= t->inputs[i].stacks != NULL;
	}
	if (!any) {
		return 0;
	}
	struct acc c = { .t = t };
	c.p = calloc(1, sizeof(*c.p));
	int r = c.p != NULL ? 0 : -ENOMEM;
	if (r == 0) {
		c.p->n_thr = t->n_threads;
		c.p->thr = calloc(t->n_threads + 1, sizeof(*c.p->thr));
		r = c.p->thr != NULL ? 0 : -ENOMEM;
		for (size_t i = 0; r == 0 && i < t->n_threads; i++) {
			c.p->thr[i].thread = (uint32_t)i;
			c.p->thr[i].top_fn = -1;
		}
	}
	r = r == 0 ? pass(&c, a) : r;
	if (r == 0 && c.p->samples > 0) {
		r = finish(&c);
		workers(t, c.p);
		idle_site(t, &c);
	}
	isc_wmap_free(&c.fns);
	isc_wmap_free(&c.lines);
	isc_wmap_free(&c.mods);
	isc_wmap_free(&c.thr_fn);
	isc_wmap_free(&c.sites);
	free(c.line_self);
	free(c.mod_self);
	free(c.thr_fn_self);
	free(c.site_w);
	free(c.stamp);
	if (r == 0 && c.p->samples > 0) {
		a->prof = c.p;
	} else {
		isc_profile_destroy(c.p);
	}
	return r;
}

void isc_profile_destroy(struct isc_profile *p)
{
	if (p == NULL) {
		return;
	}
	free(p->fn);
	free(p->mod);
	free(p->thr);
	free(p);
}
