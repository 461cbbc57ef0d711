/* SPDX-License-Identifier: MIT */
/*
 * pprof's profile.proto, gzip-compressed, as go tool pprof, Pyroscope and Parca read it.
 * Two sample types: "cpu" (nanoseconds of CPU time, from the cpu_sample events of the
 * window) and "gpu_kernel" (nanoseconds of kernel time, charged to the stack of the call
 * that launched the kernel, found through its correlation id, or for a kernel replayed
 * from a CUDA graph to the stack of the call its capture made its node from). Samples are summed by
 * (stack, thread), labelled with the thread and pid; a location per frame, a function per
 * (name, file), a mapping per native module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analyzer/base/escape.h"
#include "analyzer/model/graph-nodes.h"
#include "analyzer/model/profile.h"
#include "profile.pb-c.h"
#include "analyzer/report/report.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Function PFunction;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__ValueType PValueType;

/* A growable array of pointers to protobuf messages of one kind. */
struct vec {
	void **v;
	size_t n, cap;
};

static int vpush(struct vec *v, void *p)
{
	if (p == NULL) {
		return -ENOMEM;
	}
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		void **nv = realloc(v->v, cap * sizeof(*nv));
		if (nv == NULL) {
			free(p);
			return -ENOMEM;
		}
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = p;
	return 0;
}

struct pp {
	const struct isc_trace *t;
	struct isc_wmap str_ix, fn_ix, loc_ix, map_ix, smp_ix;
	struct vec strs, fns, locs, maps, smps;
	int err;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	}
	return h;
}

/* Index of s in the string table (0 is ""), kept there with its control characters
 * escaped: pprof and the tools that read it print these strings on terminals. */
static int64_t str(struct pp *p, const char *s)
{
	bool added;
	size_t k = isc_wmap_get(&p->str_ix, fnv(s), strlen(s), &added);
	if (k == SIZE_MAX || (added && vpush(&p->strs, isc_esc_ctrl_dup(s)) < 0)) {
		p->err = -ENOMEM;
		return 0;
	}
	return (int64_t)k;
}

/* The mapping of a native frame: its module's, where the trace has the module's
 * mappings (path, build id, memory range and file offset), else one per module name. */
static uint64_t mapping(struct pp *p, uint16_t input, const struct isc_frame *f)
{
	const struct isc_mapping *mm = isc_frame_mapping(p->t, input, f);
	if (f->kind != ISC_FK_NATIVE || (f->module == 0 && mm == NULL)) {
		return 0;
	}
	bool added;
	/* path ids and module ids never meet: the top bit keeps them apart */
	size_t k = mm != NULL ? isc_wmap_get(&p->map_ix, 1ull << 63 | mm->path, mm->start, &added)
			      : isc_wmap_get(&p->map_ix, f->module, f->build_id, &added);
	if (k == SIZE_MAX) {
		p->err = -ENOMEM;
		return 0;
	}
	if (added) {
		PMapping *m = malloc(sizeof(*m));
		if (m != NULL) {
			perftools__profiles__mapping__init(m);
			m->id = k + 1;
			m->filename = str(p, isc_trace_str(p->t, mm ? mm->path : f->module));
			m->build_id = str(p, isc_trace_str(p->t, mm ? mm->build_id : f->build_id));
			m->has_functions = true;
			if (mm != NULL) {
				m->memory_start = mm->start;
				m->memory_limit = mm->limit;
				m->file_offset = mm->offset;
			}
		}
		p->err = vpush(&p->maps, m) < 0 ? -ENOMEM : p->err;
	}
	return k + 1;
}

static uint64_t function(struct pp *p, const struct isc_frame *f)
{
	char name[512];
	isc_frame_name(p->t, f, name, sizeof(name));
	int64_t n = str(p, name);
	/* pprof's function file is the source (the mapping names the binary) */
	uint32_t src = f->kind == ISC_FK_NATIVE && f->file != 0 ? f->file : isc_frame_where(f);
	int64_t file = str(p, isc_trace_str(p->t, src));
	bool added;
	size_t k = isc_wmap_get(&p->fn_ix, (uint64_t)n, (uint64_t)file, &added);
	if (k == SIZE_MAX) {
		p->err = -ENOMEM;
		return 0;
	}
	if (added) {
		PFunction *fn = malloc(sizeof(*fn));
		if (fn != NULL) {
			perftools__profiles__function__init(fn);
			fn->id = k + 1;
			fn->name = n;
			fn->system_name = n;
			fn->filename = file;
		}
		p->err = vpush(&p->fns, fn) < 0 ? -ENOMEM : p->err;
	}
	return k + 1;
}

static uint64_t location(struct pp *p, uint16_t input, const struct isc_stack_ref *r, size_t i)
{
	const struct isc_frame *f = isc_stack_frame(r, i);
	bool added;
	/* Frames are per input and per table: the frame's address in memory tells them apart. */
	size_t k = isc_wmap_get(&p->loc_ix, (uint64_t)(uintptr_t)f, input, &added);
	if (k == SIZE_MAX) {
		p->err = -ENOMEM;
		return 0;
	}
	if (added) {
		PLocation *l = malloc(sizeof(*l));
		PLine *ln = malloc(sizeof(*ln));
		PLine **lines = malloc(sizeof(*lines));
		if (l == NULL || ln == NULL || lines == NULL) {
			free(ln);
			free(lines);
			free(l);
			p->err = -ENOMEM;
			return 0;
		}
		perftools__profiles__location__init(l);
		perftools__profiles__line__init(ln);
		ln->function_id = function(p, f);
		ln->line = f->line;
		lines[0] = ln;
		l->id = k + 1;
		l->mapping_id = mapping(p, input, f);
		/* in memory where the module's mapping is known, as pprof reads it */
		const struct isc_mapping *mm = isc_frame_mapping(p->t, input, f);
		l->address = mm != NULL ? mm->base + f->address : f->address;
		l->n_line = 1;
		l->line = lines;
		p->err = vpush(&p->locs, l) < 0 ? -ENOMEM : p->err;
	}
	return k + 1;
}

static PLabel *label(struct pp *p, const char *key, const char *s, int64_t num)
{
	PLabel *l = malloc(sizeof(*l));
	if (l == NULL) {
		p->err = -ENOMEM;
		return NULL;
	}
	perftools__profiles__label__init(l);
	l->key = str(p, key);
	l->str = s != NULL ? str(p, s) : 0;
	l->num = num;
	return l;
}

static PSample *new_sample(struct pp *p, uint16_t input, uint32_t thread,
			   const struct isc_stack_ref *r)
{
	PSample *s = calloc(1, sizeof(*s));
	uint64_t *loc = malloc((r->n + 1) * sizeof(*loc));
	int64_t *val = calloc(2, sizeof(*val));
	PLabel **lab = calloc(2, sizeof(*lab));
	if (s == NULL || loc == NULL || val == NULL || lab == NULL) {
		free(s);
		free(loc);
		free(val);
		free(lab);
		p->err = -ENOMEM;
		return NULL;
	}
	perftools__profiles__sample__init(s);
	for (size_t i = 0; i < r->n; i++) {
		loc[i] = location(p, input, r, i);
	}
	const struct isc_thread_info *ti = &p->t->threads[thread];
	char th[160];
	snprintf(th, sizeof(th), "%s %lld", ti->name ? isc_trace_str(p->t, ti->name) : "thread",
		 (long long)ti->tid);
	lab[0] = label(p, "thread", th, 0);
	lab[1] = label(p, "pid", NULL, p->t->inputs[input].pid);
	s->location_id = loc;
	s->n_location_id = r->n;
	s->value = val;
	s->n_value = 2;
	s->label = lab;
	s->n_label = lab[0] && lab[1] ? 2 : 0;
	return s;
}

/* Adds ns to value v of the sample of (input, stack, thread). */
static void charge(struct pp *p, uint16_t input, uint32_t stack, uint32_t thread, int v, int64_t ns)
{
	struct isc_stack_ref r;
	if (stack == 0 || !isc_stack_get(p->t, input, stack, &r) || thread >= p->t->n_threads) {
		return;
	}
	bool added;
	size_t k = isc_wmap_get(&p->smp_ix, ((uint64_t)input << 32) | stack, thread, &added);
	if (k == SIZE_MAX) {
		p->err = -ENOMEM;
		return;
	}
	if (added) {
		if (vpush(&p->smps, new_sample(p, input, thread, &r)) < 0) {
			p->err = -ENOMEM;
			return;
		}
	}
	((PSample *)p->smps.v[k])->value[v] += ns;
}

static void collect(struct pp *p, const struct isc_analysis *a)
{
	const struct isc_trace *t = p->t;
	str(p, "");
	for (size_t i = 0; i < t->n && p->err == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->ts < a->window.start || e->ts > a->window.end) {
			continue;
		}
		struct isc_issuer is;
		if (e->type == ISC_T_CPU_SAMPLE) {
			charge(p, e->input, isc_ev_stack(e), e->thread, 0, (int64_t)e->v.bytes);
		} else if (e->type == ISC_T_KERNEL && isc_gpu_issuer(t, e, &is)) {
			charge(p, is.input, is.stack, is.thread, 1, e->dur);
		}
	}
}

static int gzip_out(FILE *f, const uint8_t *buf, size_t n)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		return -ENOMEM;
	}
	uint8_t out[16384];
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)n;
	int zr;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		fwrite(out, 1, sizeof(out) - z.avail_out, f);
	} while (zr == Z_OK);
	deflateEnd(&z);
	return zr == Z_STREAM_END && !ferror(f) ? 0 : -EIO;
}

static void free_all(struct pp *p)
{
	for (size_t i = 0; i < p->strs.n; i++) {
		free(p->strs.v[i]);
	}
	for (size_t i = 0; i < p->locs.n; i++) {
		PLocation *l = p->locs.v[i];
		free(l->line[0]);
		free(l->line);
		free(l);
	}
	for (size_t i = 0; i < p->smps.n; i++) {
		PSample *s = p->smps.v[i];
		for (size_t k = 0; k < s->n_label; k++) {
			free(s->label[k]);
		}
		free(s->label);
		free(s->location_id);
		free(s->value);
		free(s);
	}
	for (size_t i = 0; i < p->fns.n; i++) {
		free(p->fns.v[i]);
	}
	for (size_t i = 0; i < p->maps.n; i++) {
		free(p->maps.v[i]);
	}
	struct vec *vs[] = { &p->strs, &p->fns, &p->locs, &p->maps, &p->smps };
	for (size_t i = 0; i < 5; i++) {
		free(vs[i]->v);
	}
	struct isc_wmap *ms[] = { &p->str_ix, &p->fn_ix, &p->loc_ix, &p->map_ix, &p->smp_ix };
	for (size_t i = 0; i < 5; i++) {
		isc_wmap_free(ms[i]);
	}
}

int isc_export_pprof(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		     const struct isc_report_opts *o)
{
	(void)o;
	struct pp p = { .t = t };
	collect(&p, a);
	PValueType cpu = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PValueType gpu = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	PValueType period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	cpu.type = period.type = str(&p, "cpu");
	cpu.unit = gpu.unit = period.unit = str(&p, "nanoseconds");
	gpu.type = str(&p, "gpu_kernel");
	PValueType *types[] = { &cpu, &gpu };
	double hz = 0;
	for (size_t i = 0; i < t->n_inputs; i++) {
		hz = t->inputs[i].sample_hz > hz ? t->inputs[i].sample_hz : hz;
	}
	PProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	prof.n_sample_type = 2;
	prof.sample_type = types;
	prof.n_sample = p.smps.n;
	prof.sample = (PSample **)p.smps.v;
	prof.n_mapping = p.maps.n;
	prof.mapping = (PMapping **)p.maps.v;
	prof.n_location = p.locs.n;
	prof.location = (PLocation **)p.locs.v;
	prof.n_function = p.fns.n;
	prof.function = (PFunction **)p.fns.v;
	prof.n_string_table = p.strs.n;
	prof.string_table = (char **)p.strs.v;
	prof.duration_nanos = a->window.end - a->window.start;
	/* wall-clock start (profile stores file a profile under it; Pyroscope takes the
	 * request's from= when it is 0): the window's start through the first anchor */
	for (size_t i = 0; i < t->n_inputs; i++) {
		if (t->inputs[i].has_anchor) {
			prof.time_nanos = a->window.start - t->inputs[i].anchor_mono_ns +
					  t->inputs[i].anchor_real_ns;
			break;
		}
	}
	prof.period_type = &period;
	prof.period = hz > 0 ? (int64_t)(1e9 / hz) : 0;
	prof.default_sample_type = cpu.type;
	int r = p.err;
	if (r == 0) {
		size_t n = perftools__profiles__profile__get_packed_size(&prof);
		uint8_t *buf = malloc(n + 1);
		r = buf != NULL ? 0 : -ENOMEM;
		if (r == 0) {
			perftools__profiles__profile__pack(&prof, buf);
			r = gzip_out(f, buf, n);
		}
		free(buf);
	}
	free_all(&p);
	return r;
}
