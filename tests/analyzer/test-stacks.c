/* SPDX-License-Identifier: MIT */
/*
 * Sampled stacks: the reader, where the time goes, rules that name the code, the
 * workers advice, folded stacks. The traces come from make-stacks.py (data/stacks/).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "analyzer/model/profile.h"
#include "analyzer/readers/reader.h"
#include "analyzer/report/report.h"

static struct isc_trace *load_many(const char *const *rel, size_t n)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(isc_read_file(t, data_path(rel[i]), NULL, &d), 0, "%s: %s", rel[i],
			     d.msg);
	}
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

/* The steady-state row of a function, by name. */
static const struct isc_prof_fn *fn(const struct isc_trace *t, const struct isc_profile *p,
				    const char *name)
{
	for (size_t i = 0; i < p->n_fn; i++) {
		if (strcmp(isc_trace_str(t, p->fn[i].function), name) == 0) {
			return &p->fn[i];
		}
	}
	cr_assert_fail("no function %s in the profile", name);
	return NULL;
}

static int64_t steady(const struct isc_profile *p)
{
	int64_t s = 0;
	for (int c = 0; c < ISC_PC_STEADY; c++) {
		s += p->cat[c];
	}
	return s;
}

static int64_t sample_ns(const struct isc_trace *t)
{
	int64_t s = 0;
	for (size_t i = 0; i < t->n; i++) {
		s += t->ev[i].type == ISC_T_CPU_SAMPLE ? (int64_t)t->ev[i].v.bytes : 0;
	}
	return s;
}

static const struct isc_suggestion *sugg(const struct isc_analysis *a, const char *id)
{
	for (size_t i = 0; i < a->n_sugg; i++) {
		if (strcmp(a->sugg[i].rule_id, id) == 0) {
			return &a->sugg[i];
		}
	}
	return NULL;
}

Test(stacks, reader_resolves_every_sample)
{
	struct isc_trace *t = load("stacks/stacks-cpu.json");
	cr_assert_not_null(t->inputs[0].stacks);
	cr_assert_eq(t->inputs[0].sample_hz, 100.0);
	size_t samples = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct isc_stack_ref r;
		if (t->ev[i].type != ISC_T_CPU_SAMPLE) {
			continue;
		}
		samples++;
		cr_assert(isc_stack_of(t, &t->ev[i], &r));
		cr_assert_gt(r.n, 0);
		cr_assert_eq(t->ev[i].v.bytes, 10000000ull); /* weight_us 10000 */
		/* The outermost frame of every sample is the script's module. */
		const struct isc_frame *outer = isc_stack_frame(&r, r.n - 1);
		cr_assert_str_eq(isc_trace_str(t, outer->function), "<module>");
		cr_assert_eq(outer->kind, ISC_FK_PYTHON);
	}
	cr_assert_eq(samples, 530);
	isc_trace_destroy(t);
}

static int read_text(const char *text, struct isc_diag *d)
{
	struct isc_trace *t = isc_trace_create();
	int r = isc_read_buffer(t, "mem.json", text, strlen(text), NULL, d);
	isc_trace_destroy(t);
	return r;
}

#define HEAD                                                                                      \
	"{\"format_version\":\"1.1\",\"trace_metadata\":{},\"events\":[{\"type\":\"cpu_sample\"," \
	"\"timestamp_us\":1.5,\"thread_id\":7,\"pid\":1,\"weight_us\":10,\"stack_id\":"

Test(stacks, reader_checks_the_contract)
{
	static const struct {
		const char *text, *expect;
	} bad[] = {
		{ HEAD "2}],\"stacks\":{\"frames\":[{\"id\":1,\"kind\":\"native\"}],"
		       "\"stacks\":[{\"id\":1,\"frames\":[1]}]}}",
		  "stack_id 2 is not in stacks.stacks" },
		{ HEAD "1}],\"stacks\":{\"frames\":[{\"id\":1,\"kind\":\"java\"}]}}",
		  "\"kind\" native or python" },
		{ HEAD "1}],\"stacks\":{\"frames\":[{\"id\":1,\"kind\":\"native\"}],"
		       "\"stacks\":[{\"id\":1,\"frames\":[3]}]}}",
		  "frame id 3 is not in stacks.frames" },
		{ HEAD "1}],\"stacks\":{\"frames\":[{\"kind\":\"native\"}]}}",
		  "stacks.frames[0].id is missing" },
		{ "{\"format_version\":\"1.1\",\"trace_metadata\":{},\"events\":[{\"type\":"
		  "\"cpu_sample\",\"timestamp_us\":1,\"thread_id\":7,\"weight_us\":10}]}",
		  "stack_id is missing" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct isc_diag d = { "" };
		cr_assert_neq(read_text(bad[i].text, &d), 0, "case %zu read", i);
		cr_assert(strstr(d.msg, bad[i].expect) != NULL, "case %zu: '%s'", i, d.msg);
	}
	struct isc_diag d = { "" };
	cr_assert_eq(read_text(HEAD "1}],\"stacks\":{\"frames\":[{\"id\":1,\"kind\":\"native\"}],"
				    "\"stacks\":[{\"id\":1,\"frames\":[1]}]}}",
			       &d),
		     0, "%s", d.msg);
}

Test(stacks, string_stacks_of_older_traces_are_interned)
{
	const char *text =
		"{\"format_version\":\"1.0\",\"trace_metadata\":{},\"events\":["
		"{\"id\":0,\"type\":\"cpu_syscall\",\"name\":\"read\",\"timestamp_start_us\":1,"
		"\"duration_us\":5,\"metadata\":{\"thread_id\":7,\"category\":\"io\",\"stack\":"
		"[\"read+0x10 (libc.so.6)\",\"load_batch+0x1f "
		"(libapp.so)\",\"libapp.so+0x1234\"]}},"
		"{\"id\":1,\"type\":\"cpu_syscall\",\"name\":\"read\",\"timestamp_start_us\":9,"
		"\"duration_us\":5,\"metadata\":{\"thread_id\":7,\"category\":\"io\",\"stack\":"
		"[\"read+0x10 (libc.so.6)\",\"load_batch+0x1f "
		"(libapp.so)\",\"libapp.so+0x1234\"]}}]}";
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_eq(isc_read_buffer(t, "mem.json", text, strlen(text), NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	struct isc_stack_ref r;
	cr_assert(isc_stack_of(t, &t->ev[0], &r));
	cr_assert_eq(r.n, 3);
	cr_assert_eq(isc_ev_stack(&t->ev[0]), isc_ev_stack(&t->ev[1])); /* interned once */
	cr_assert_str_eq(isc_trace_str(t, isc_stack_frame(&r, 1)->function), "load_batch");
	cr_assert_str_eq(isc_trace_str(t, isc_stack_frame(&r, 1)->module), "libapp.so");
	cr_assert_eq(isc_stack_frame(&r, 2)->address, 0x1234);
	/* The site skips libc: the application's function is named. */
	cr_assert_eq(isc_stack_site(t, &r, NULL), 1);
	isc_trace_destroy(t);
}

Test(stacks, six_three_one_split_exactly)
{
	struct isc_trace *t = load("stacks/stacks-cpu.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_profile *p = a->prof;
	cr_assert_not_null(p);
	int64_t all = steady(p);
	cr_assert_gt(all, 0);
	cr_assert_eq(p->total, sample_ns(t));
	/* Start-up (samples under the import system) is apart from the steady state. */
	cr_assert_eq(all + p->cat[ISC_PC_STARTUP], p->total);
	cr_assert_gt(p->cat[ISC_PC_STARTUP], 0);
	cr_assert_eq(fn(t, p, "tokenize")->self_steady * 10, all * 6);
	cr_assert_eq(fn(t, p, "sgemm_kernel")->self_steady * 10, all * 3);
	cr_assert_eq(fn(t, p, "decode")->self_steady * 10, all * 1);
	cr_assert_eq(fn(t, p, "forward")->total_steady * 10, all * 3);
	cr_assert_eq(fn(t, p, "forward")->self_steady, 0);
	cr_assert_eq(fn(t, p, "handle")->total_steady, all);
	cr_assert_eq(fn(t, p, "tokenize")->line, 41);
	/* No GPU: all of it computes with the GPU idle. */
	cr_assert_eq(p->cat[ISC_PC_GPU_IDLE], all);
	/* Library share: serve.py 70 %, BLAS 30 %. */
	cr_assert_eq(p->mod[0].self * 10, all * 7);
	cr_assert_str_eq(isc_trace_str(t, p->mod[1].module), "libopenblas.so.0");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A server without a GPU or a data loader that tokenizes: the code is the run's own work.
 * The rule names it and says to make it cheaper; DataLoader workers are no advice for a
 * program that has no data loader (issue 22: no GPU advice without GPU work). */
Test(stacks, preprocessing_rule_names_function_and_line)
{
	struct isc_trace *t = load("stacks/stacks-cpu.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->verdict.type, ISC_BOUND_CPU);
	const struct isc_suggestion *s = sugg(a, "host.cpu-preprocessing");
	cr_assert_not_null(s);
	cr_assert(strstr(s->where, "tokenize() serve.py:41, 60 % of host time"), "%s", s->where);
	cr_assert(strstr(s->where, "GPU") == NULL, "%s", s->where);
	cr_assert(strstr(s->action, "Make 'tokenize() serve.py:41' cheaper") != NULL, "%s",
		  s->action);
	cr_assert(strstr(s->action, "num_workers") == NULL, "%s", s->action);
	cr_assert_eq(a->prof->worker_threads, 0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* The same samples with tokenize() called from a DataLoader's fetch in the main process
 * (num_workers=0), still without a GPU: the input pipeline is the lever, and the advice
 * names the loader's workers. */
Test(stacks, tokenizing_in_the_data_loader_advises_workers)
{
	size_t n;
	char *text = slurp(data_path("stacks/stacks-cpu.json"), &n);
	const char handle[] = "\"function\":\"handle\",\"module\":\"serve.py\","
			      "\"file\":\"serve.py\"";
	const char fetch[] = "\"function\":\"fetch\",\"module\":\"fetch.py\","
			     "\"file\":\"torch/utils/data/_utils/fetch.py\"";
	char *at = strstr(text, handle);
	cr_assert_not_null(at, "the fixture's handle() frame");
	size_t head = (size_t)(at - text), tail = n - head - strlen(handle);
	char *edited = malloc(n + sizeof(fetch));
	cr_assert_not_null(edited);
	memcpy(edited, text, head);
	memcpy(edited + head, fetch, strlen(fetch));
	memcpy(edited + head + strlen(fetch), at + strlen(handle), tail);
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_eq(
		isc_read_buffer(t, "loader.json", edited, head + strlen(fetch) + tail, NULL, &d), 0,
		"%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_gt(a->prof->idle_loading, 0);
	const struct isc_suggestion *s = sugg(a, "host.cpu-preprocessing");
	cr_assert_not_null(s);
	cr_assert(strstr(s->action, "'tokenize() serve.py:41'") != NULL, "%s", s->action);
	cr_assert(strstr(s->action, "num_workers") != NULL, "%s", s->action);
	cr_assert(strstr(s->action, "GPU") == NULL, "%s", s->action);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	free(edited);
	free(text);
}

/* 40 % tokenize, 60 % an nn.Module call (BLAS below it): the rule names tokenize, not
 * the model, and leaves the model's samples out of the preprocessing. */
Test(stacks, model_code_is_not_preprocessing)
{
	struct isc_trace *t = load("stacks/stacks-model.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_profile *p = a->prof;
	cr_assert_eq(p->idle_model * 10, p->cat[ISC_PC_GPU_IDLE] * 6);
	const struct isc_suggestion *s = sugg(a, "host.cpu-preprocessing");
	cr_assert_not_null(s);
	cr_assert(strstr(s->where, "tokenize() serve.py:41, 40 % of host time"), "%s", s->where);
	cr_assert(strstr(s->action, "'tokenize() serve.py:41'") != NULL, "%s", s->action);
	cr_assert(strstr(s->action, "forward") == NULL, "%s", s->action);
	bool said = false;
	for (int i = 0; i < s->n_evidence; i++) {
		said |= strstr(s->evidence[i], "60.0 % of its CPU samples run the model") != NULL;
	}
	cr_assert(said, "the evidence says what was left out");
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(stacks, workers_found_by_thread_name_suppress_the_advice)
{
	struct isc_trace *t = load("stacks/stacks-threads.json");
	struct isc_analysis *a = analyse(t, NULL);
	cr_assert_eq(a->prof->worker_threads, 2);
	cr_assert_eq(a->prof->worker_processes, 1);
	const struct isc_suggestion *s = sugg(a, "host.cpu-preprocessing");
	cr_assert_not_null(s);
	cr_assert(strstr(s->action, "num_workers") == NULL, "%s", s->action);
	cr_assert(strstr(s->action, "already has data-loading workers") != NULL, "%s", s->action);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(stacks, worker_processes_found_by_their_stacks)
{
	static const char *const files[] = { "stacks/stacks-workers.json",
					     "stacks/stacks-workers.1001.json",
					     "stacks/stacks-workers.1002.json" };
	struct isc_trace *t = load_many(files, 3);
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_profile *p = a->prof;
	cr_assert_eq(p->worker_processes, 2);
	cr_assert_eq(p->worker_threads, 2);
	for (size_t i = 0; i < p->n_thr; i++) {
		const struct isc_prof_thread *th = &p->thr[i];
		if (th->steady == 0) {
			continue;
		}
		const char *top = isc_trace_str(t, p->fn[th->top_fn].function);
		int64_t pid = t->inputs[t->threads[th->thread].input].pid;
		/* The workers tokenize; the main process runs the model (BLAS under forward). */
		cr_assert_str_eq(top, pid == 1000 ? "sgemm_kernel" : "tokenize", "pid %lld",
				 (long long)pid);
		cr_assert_eq(th->worker, pid != 1000);
	}
	const struct isc_suggestion *s = sugg(a, "host.cpu-preprocessing");
	cr_assert(s == NULL || strstr(s->action, "num_workers") == NULL);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(stacks, copy_sync_names_the_python_line)
{
	struct isc_trace *t = load("stacks/stacks-gpu.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_suggestion *s = sugg(a, "copy.sync");
	cr_assert_not_null(s);
	cr_assert(strstr(s->where, "handle() serve.py:92 via THPVariable_cpu") == s->where, "%s",
		  s->where);
	/* Samples inside the blocking copy are framework overhead, the others GPU-idle work. */
	cr_assert_gt(a->prof->cat[ISC_PC_CUDA], 0);
	cr_assert_gt(a->prof->cat[ISC_PC_GPU_IDLE], 0);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(stacks, folded_sums_to_the_sample_weights)
{
	struct isc_trace *t = load("stacks/stacks-threads.json");
	struct isc_analysis *a = analyse(t, NULL);
	size_t len;
	char *out = render(t, a, "folded", &len);
	int64_t sum = 0;
	int lines = 0;
	for (char *line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' ');
		cr_assert_not_null(sp);
		cr_assert(strncmp(line, "pid 1000;", 9) == 0, "%s", line);
		sum += strtoll(sp + 1, NULL, 10);
		lines++;
	}
	cr_assert_gt(lines, 3);
	cr_assert_eq(sum * 1000, sample_ns(t));
	free(out);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

Test(stacks, markdown_and_json_show_where_the_time_goes)
{
	struct isc_trace *t = load("stacks/stacks-cpu.json");
	struct isc_analysis *a = analyse(t, NULL);
	size_t len;
	char *md = render(t, a, "md", &len);
	cr_assert(strstr(md, "## Where the time goes") != NULL);
	cr_assert(strstr(md, "| tokenize() serve.py:41 | 3.000 s | 60.0 % |") != NULL);
	cr_assert(strstr(md, "   - Where: tokenize() serve.py:41") != NULL);
	free(md);
	char *js = render(t, a, "json", &len);
	cr_assert(strstr(js, "\"cpu_profile\"") != NULL);
	cr_assert(strstr(js, "\"where\": \"tokenize() serve.py:41") != NULL);
	free(js);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* A stripped library's functions have no name: each is one row by its start (from the
 * unwind table), not one row per sampled address, and reads "libhot.so+0x1000". */
Test(stacks, unnamed_functions_are_one_row_each_by_their_start)
{
	struct isc_trace *t = load("stacks/stacks-stripped.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_profile *p = a->prof;
	int64_t all = steady(p);
	cr_assert_gt(all, 0);
	int unnamed = 0;
	for (size_t i = 0; i < p->n_fn; i++) {
		unnamed += p->fn[i].function == 0;
	}
	cr_assert_eq(unnamed, 3, "0x1000, 0x2000 and the address with no start, 0x3008");
	size_t len;
	char *md = render(t, a, "md", &len);
	cr_assert(strstr(md, "| libhot.so+0x1000 | 3.000 s | 60.0 % |") != NULL, "%s", md);
	cr_assert(strstr(md, "| libhot.so+0x2000 | 1.500 s | 30.0 % |") != NULL);
	cr_assert(strstr(md, "| libhot.so+0x3008 | 500.000 ms | 10.0 % |") != NULL);
	cr_assert(strstr(md, "+0x0 ") == NULL && strstr(md, "+0x1010") == NULL);
	free(md);
	char *folded = render(t, a, "folded", &len);
	int64_t in_first = 0;
	for (char *line = strtok(folded, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' ');
		if (sp - line > 16 && strncmp(sp - 16, "libhot.so+0x1000", 16) == 0) {
			in_first += strtoll(sp + 1, NULL, 10);
		}
	}
	cr_assert_eq(in_first * 1000 * 10, all * 6);
	free(folded);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}

/* Frames with neither a name nor a module (a spill converted without symbols) print as
 * [unknown]: never an address, and never 0x0, where a reader expects a function. */
Test(stacks, frames_in_no_module_print_as_unknown)
{
	size_t len;
	char *src = slurp(data_path("stacks/stacks-stripped.json"), &len);
	cr_assert_not_null(src);
	/* the same trace, its unnamed frames in no module */
	char *dst = malloc(len + 1), *o = dst;
	static const char mod[] = "\"libhot.so\"";
	for (const char *p = src; *p;) {
		if (strncmp(p, mod, sizeof(mod) - 1) == 0) {
			o = stpcpy(o, "\"\"");
			p += sizeof(mod) - 1;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	char path[] = "/tmp/isc-unknown-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0 && write(fd, dst, strlen(dst)) == (ssize_t)strlen(dst));
	close(fd);
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d = { "" };
	cr_assert_eq(isc_read_file(t, path, NULL, &d), 0, "%s", d.msg);
	unlink(path);
	cr_assert_eq(isc_trace_finalize(t), 0);
	struct isc_analysis *a = analyse(t, NULL);
	char *md = render(t, a, "md", &len);
	cr_assert_not_null(strstr(md, "| [unknown] |"), "%s", md);
	cr_assert_null(strstr(md, "| 0x"), "%s", md);
	free(md);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	free(src);
	free(dst);
}

/* Native frames with a line table: a function's row names its hottest line and that
 * line's file, the JSON profile gives both, and a line inlined from a header is counted
 * to the function it is in. */
Test(stacks, native_lines_name_the_hottest_line_and_its_file)
{
	struct isc_trace *t = load("stacks/stacks-lines.json");
	struct isc_analysis *a = analyse(t, NULL);
	const struct isc_profile *p = a->prof;
	const struct isc_prof_fn *r = fn(t, p, "crunch");
	cr_assert_eq(r->line, 20);
	cr_assert_eq(r->self_steady, steady(p), "the inlined line is crunch's too");
	size_t len;
	char *md = render(t, a, "md", &len);
	cr_assert(strstr(md, "| crunch (hot.c:20, hot) | 5.000 s | 100.0 % |") != NULL, "%s", md);
	cr_assert(strstr(md, "| main (hot.c:40, hot) | 0.0 us |") != NULL, "%s", md);
	free(md);
	char *js = render(t, a, "json", &len);
	const char *row = strstr(js, "\"function\": \"crunch\"");
	cr_assert_not_null(row, "%s", js);
	const char *end = strstr(row, "\"self_us\"");
	const char *file = strstr(row, "\"file\": \"hot.c\""), *line = strstr(row, "\"line\": 20,");
	cr_assert(end && file && line && file < end && line < end, "%s", row);
	free(js);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
}
