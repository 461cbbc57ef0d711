/* SPDX-License-Identifier: MIT */
/* The "cpu_profile" member of the JSON result: where the time goes (profile.h). */
#include "format/json-writer.h"
#include "analyzer/model/profile.h"
#include "analyzer/report/report.h"

static void us(struct isc_json *j, const char *key, int64_t ns)
{
	isc_json_kv_double(j, key, (double)ns / 1000.0, 3);
}

static void by_cat(struct isc_json *j, const char *key, const int64_t *v)
{
	isc_json_key(j, key);
	isc_json_begin_object(j);
	for (int c = 0; c < ISC_PC__COUNT; c++) {
		us(j, isc_pcat_name(c), v[c]);
	}
	isc_json_end_object(j);
}

static void functions(struct isc_json *j, const struct isc_trace *t, const struct isc_profile *p,
		      int top)
{
	isc_json_key(j, "functions");
	isc_json_begin_array(j);
	for (size_t i = 0; i < p->n_fn && (int)i < top; i++) {
		const struct isc_prof_fn *r = &p->fn[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "function", isc_trace_str(t, r->function));
		isc_json_kv_string(j, "kind", r->kind == ISC_FK_PYTHON ? "python" : "native");
		isc_json_kv_string(j, r->kind == ISC_FK_PYTHON ? "file" : "module",
				   isc_trace_str(t, r->where));
		struct isc_frame f = isc_frame_of_key(r->function, r->where, r->kind, r->line);
		uint32_t src = r->kind == ISC_FK_NATIVE ? isc_frame_source(t, &f) : 0;
		if (src != 0) {
			isc_json_kv_string(j, "file", isc_trace_str(t, src));
		}
		if (f.line > 0) {
			isc_json_kv_uint(j, "line", f.line);
		} else if (f.start > 0) {
			isc_json_key(j, "address"); /* a function with no name: where it is */
			isc_json_hex(j, f.start);
		}
		us(j, "self_us", r->self_steady);
		us(j, "total_us", r->total_steady);
		by_cat(j, "self_by_category_us", r->self);
		by_cat(j, "total_by_category_us", r->total);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

static void libraries(struct isc_json *j, const struct isc_trace *t, const struct isc_profile *p)
{
	isc_json_key(j, "libraries");
	isc_json_begin_array(j);
	for (size_t i = 0; i < p->n_mod; i++) {
		isc_json_begin_object(j);
		isc_json_kv_string(j, "name", isc_trace_str(t, p->mod[i].module));
		us(j, "self_us", p->mod[i].self);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

static void threads(struct isc_json *j, const struct isc_trace *t, const struct isc_profile *p)
{
	isc_json_key(j, "threads");
	isc_json_begin_array(j);
	for (size_t i = 0; i < p->n_thr; i++) {
		const struct isc_prof_thread *th = &p->thr[i];
		if (th->steady + th->startup == 0) {
			continue;
		}
		const struct isc_thread_info *ti = &t->threads[th->thread];
		isc_json_begin_object(j);
		isc_json_kv_int(j, "pid", t->inputs[ti->input].pid);
		isc_json_kv_int(j, "thread_id", ti->tid);
		isc_json_kv_string(j, "name", isc_trace_str(t, ti->name));
		us(j, "steady_us", th->steady);
		us(j, "startup_us", th->startup);
		if (th->top_fn >= 0) {
			isc_json_kv_string(j, "hottest_function",
					   isc_trace_str(t, p->fn[th->top_fn].function));
		}
		isc_json_kv_bool(j, "worker", th->worker);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
}

void isc_json_profile(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a,
		      int top)
{
	const struct isc_profile *p = a->prof;
	if (p == NULL) {
		return;
	}
	isc_json_key(j, "cpu_profile");
	isc_json_begin_object(j);
	isc_json_kv_uint(j, "samples", p->samples);
	us(j, "total_us", p->total);
	by_cat(j, "by_category_us", p->cat);
	isc_json_kv_uint(j, "worker_threads", p->worker_threads);
	isc_json_kv_uint(j, "worker_processes", p->worker_processes);
	functions(j, t, p, top);
	libraries(j, t, p);
	threads(j, t, p);
	isc_json_end_object(j);
}
