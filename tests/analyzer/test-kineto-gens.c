/* SPDX-License-Identifier: MIT */
/*
 * Every PyTorch-profiler generation read to the same model: data/kineto-gens/ holds one
 * run as each writer wrote it (make-kineto-gens.py), real exports of Debian's torch are
 * made here, and what cannot be read is an error that says what was there.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/causal/graph.h"
#include "analyzer/readers/reader.h"
#include "helpers.h"

static const char *const kineto_gens[] = {
	"kineto-1.8", "kineto-1.9", "kineto-1.13", "kineto-2.1", "kineto-2.5",
};
#define N_GENS (sizeof(kineto_gens) / sizeof(kineto_gens[0]))

static struct isc_trace *gen(const char *name)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "kineto-gens/%s.json", name);
	return load(rel);
}

static int64_t tid_of(const struct isc_trace *t, uint32_t thread)
{
	return thread < t->n_threads ? t->threads[thread].tid : -1;
}

/* One event as the model holds it but its start, its launch (the correlation pair)
 * included, with the launch's start relative to the event's. PyTorch 1.8 wrote
 * record_function ranges as operators ("Operator"): with as_ops, scopes read as such. */
static void describe(const struct isc_trace *t, size_t i, bool as_ops, char *buf, size_t cap)
{
	struct isc_ev copy = t->ev[i];
	const struct isc_ev *e = &copy;
	if (as_ops && copy.type == ISC_T_SCOPE) {
		copy.type = ISC_T_CPU_OP;
		copy.sub = 0;
	}
	const struct isc_ev *l = isc_type_is_gpu(e->type) ? isc_trace_launch_of(t, e) : NULL;
	snprintf(buf, cap,
		 "%s %s dur=%lld tid=%lld stream=%d dev=%d corr=%llu bytes=%llu flags=%u sub=%u "
		 "launch=%s%+lld",
		 isc_type_name(e->type), isc_trace_str(t, e->name), (long long)e->dur,
		 (long long)tid_of(t, e->thread), e->stream, e->device, (unsigned long long)e->corr,
		 (unsigned long long)e->v.bytes, e->flags, e->sub,
		 l ? isc_trace_str(t, l->name) : "-", l ? (long long)(l->ts - e->ts) : 0LL);
}

static size_t flows_of(const struct isc_trace *t, unsigned kind)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n_flows; i++) {
		n += t->flows[i].kind == kind;
	}
	return n;
}

/* The run of make-kineto-gens.py, as the newest generation has it. */
Test(kineto_gens, the_newest_reads_the_whole_run)
{
	struct isc_trace *t = gen("kineto-2.5");
	cr_assert_eq(count_events(t, ISC_T_KERNEL), 6);
	cr_assert_eq(count_events(t, ISC_T_H2D), 2);
	cr_assert_eq(count_events(t, ISC_T_D2H), 2);
	cr_assert_eq(count_events(t, ISC_T_MEMSET), 2);
	cr_assert_eq(count_events(t, ISC_T_CUDA_API), 14);
	cr_assert_eq(count_events(t, ISC_T_CPU_OP), 14);
	cr_assert_eq(count_events(t, ISC_T_SCOPE), 2);
	cr_assert_eq(t->n, 42);
	cr_assert_eq(t->n_threads, 2);
	cr_assert_eq(flows_of(t, ISC_FLOW_LAUNCH), 12, "one per GPU operation");
	cr_assert_eq(flows_of(t, ISC_FLOW_FWDBWD), 2);
	for (size_t i = 0; i < t->n_flows; i++) {
		const struct isc_flow *f = &t->flows[i];
		const struct isc_ev *s = &t->ev[f->src], *d = &t->ev[f->dst];
		if (f->kind == ISC_FLOW_LAUNCH) {
			cr_assert_eq(s->type, ISC_T_CUDA_API);
			cr_assert(isc_type_is_gpu(d->type));
			cr_assert_eq(s->corr, d->corr, "a launch flow joins a correlation pair");
		} else {
			cr_assert_eq(s->type, ISC_T_CPU_OP);
			cr_assert_str_eq(isc_trace_str(t, s->name), "aten::linear");
			cr_assert_eq(tid_of(t, d->thread), 4251,
				     "the backward, on autograd's thread");
		}
	}
	isc_trace_destroy(t);
}

Test(kineto_gens, every_generation_reads_to_the_same_model)
{
	struct isc_trace *ref = gen("kineto-2.5");
	struct isc_analysis *ra = analyse(ref, NULL);
	for (size_t g = 0; g < N_GENS; g++) {
		struct isc_trace *t = gen(kineto_gens[g]);
		cr_assert_eq(t->n, ref->n, "%s: %zu events", kineto_gens[g], t->n);
		cr_assert_eq(t->n_threads, ref->n_threads, "%s", kineto_gens[g]);
		for (size_t k = 0; k < t->n_threads; k++) {
			cr_assert_eq(t->threads[k].tid, ref->threads[k].tid, "%s", kineto_gens[g]);
		}
		cr_assert_eq(t->inputs[0].pid, 4242, "%s", kineto_gens[g]);
		/* 2.5's times are relative to its base: the same up to one offset */
		int64_t off = t->ev[0].ts - ref->ev[0].ts;
		bool v18 = strcmp(kineto_gens[g], "kineto-1.8") == 0;
		for (size_t i = 0; i < t->n; i++) {
			char a[512], b[512];
			describe(t, i, v18, a, sizeof(a));
			describe(ref, i, v18, b, sizeof(b));
			cr_assert_str_eq(a, b, "%s: event %zu: %s / %s", kineto_gens[g], i, a, b);
			cr_assert_eq(t->ev[i].ts - off, ref->ev[i].ts, "%s: %s", kineto_gens[g], a);
		}
		/* 1.8 wrote launch flows only; autograd's came with 1.9 */
		bool fwdbwd = !v18;
		cr_assert_eq(flows_of(t, ISC_FLOW_LAUNCH), 12, "%s", kineto_gens[g]);
		cr_assert_eq(flows_of(t, ISC_FLOW_FWDBWD), fwdbwd ? 2 : 0, "%s", kineto_gens[g]);
		for (size_t i = 0, j = 0; i < t->n_flows; i++, j++) {
			while (!fwdbwd && ref->flows[j].kind == ISC_FLOW_FWDBWD) {
				j++;
			}
			cr_assert_eq(t->flows[i].kind, ref->flows[j].kind, "%s", kineto_gens[g]);
			cr_assert_eq(t->flows[i].src, ref->flows[j].src, "%s: flow %zu",
				     kineto_gens[g], i);
			cr_assert_eq(t->flows[i].dst, ref->flows[j].dst, "%s: flow %zu",
				     kineto_gens[g], i);
		}
		struct isc_analysis *a = analyse(t, NULL);
		cr_assert_eq(a->n_hta, 1, "%s", kineto_gens[g]);
		cr_assert_eq(a->hta[0].span, ra->hta[0].span, "%s", kineto_gens[g]);
		cr_assert_eq(a->hta[0].idle, ra->hta[0].idle, "%s", kineto_gens[g]);
		cr_assert_eq(a->hta[0].compute, ra->hta[0].compute, "%s", kineto_gens[g]);
		cr_assert_eq(a->hta[0].non_compute, ra->hta[0].non_compute, "%s", kineto_gens[g]);
		cr_assert_eq(a->n_streams, 1, "%s", kineto_gens[g]);
		cr_assert_eq(a->streams[0].stream, 7, "%s", kineto_gens[g]);
		cr_assert_eq(a->launch.pairs, ra->launch.pairs, "%s", kineto_gens[g]);
		/* 1.8 does not say that the step's self time waits for the autograd thread
		 * (no fwdbwd flow): its path and verdict may differ, the others' may not */
		if (fwdbwd) {
			cr_assert_eq(a->verdict.type, ra->verdict.type, "%s", kineto_gens[g]);
			cr_assert_eq(a->causal->handoffs, ra->causal->handoffs, "%s",
				     kineto_gens[g]);
		}
		isc_analysis_destroy(a);
		isc_trace_destroy(t);
	}
	cr_assert_eq(ra->hta[0].compute + ra->hta[0].non_compute, 1790000,
		     "6 kernels of 1500 us, 4 copies and 2 memsets of 290 us");
	isc_analysis_destroy(ra);
	isc_trace_destroy(ref);
}

/* torch.autograd.profiler's export before 1.8 has no categories, no runtime calls and
 * names a GPU interval after its operator: the host functions, the GPU work and the
 * launch links are the run's. */
Test(kineto_gens, the_legacy_export_reads_to_the_same_host_and_gpu_work)
{
	struct isc_trace *ref = gen("kineto-1.13");
	struct isc_trace *t = gen("legacy-1.7");
	cr_assert_eq(count_events(t, ISC_T_CPU_OP),
		     count_events(ref, ISC_T_CPU_OP) + count_events(ref, ISC_T_SCOPE));
	cr_assert_eq(count_events(t, ISC_T_CUDA_API), 0);
	size_t gpu = 0, ref_gpu = 0;
	int64_t busy = 0, ref_busy = 0;
	for (size_t i = 0, j = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (!isc_type_is_gpu(e->type)) {
			continue;
		}
		while (!isc_type_is_gpu(ref->ev[j].type)) {
			j++;
		}
		cr_assert_eq(e->ts, ref->ev[j].ts);
		cr_assert_eq(e->dur, ref->ev[j].dur);
		cr_assert_eq(e->device, 0);
		busy += e->dur;
		ref_busy += ref->ev[j].dur;
		gpu++;
		j++;
	}
	for (size_t j = 0; j < ref->n; j++) {
		ref_gpu += isc_type_is_gpu(ref->ev[j].type);
	}
	cr_assert_eq(gpu, ref_gpu);
	cr_assert_eq(busy, ref_busy);
	cr_assert_eq(t->n_threads, 2);
	cr_assert_eq(flows_of(t, ISC_FLOW_LAUNCH), gpu, "a flow to every GPU interval");
	for (size_t i = 0; i < t->n_flows; i++) {
		const struct isc_ev *s = &t->ev[t->flows[i].src], *d = &t->ev[t->flows[i].dst];
		cr_assert_eq(s->type, ISC_T_CPU_OP);
		cr_assert_eq(d->type, ISC_T_KERNEL);
		cr_assert_str_eq(isc_trace_str(t, s->name), isc_trace_str(t, d->name));
		cr_assert(s->ts <= d->ts);
	}
	isc_trace_destroy(t);
	isc_trace_destroy(ref);
}

/* Interpreters that import torch: the configured one, Debian's, pyenv's. */
static size_t torch_pythons(char found[][256], size_t cap)
{
	size_t n = 0;
	glob_t g = { 0 };
	const char *home = getenv("HOME");
	char pat[512];
	snprintf(pat, sizeof(pat), "%s/.pyenv/versions/*/bin/python3", home ? home : "/root");
	glob(pat, 0, NULL, &g);
	const char *fixed[] = { "/usr/bin/python3", "/usr/local/bin/python3" };
	for (size_t i = 0; i < 2 + g.gl_pathc && n < cap; i++) {
		const char *p = i < 2 ? fixed[i] : g.gl_pathv[i - 2];
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "'%s' -c 'import torch' >/dev/null 2>&1", p);
		if (access(p, X_OK) == 0 && system(cmd) == 0) {
			snprintf(found[n++], 256, "%s", p);
		}
	}
	globfree(&g);
	return n;
}

/* Real exports of this machine's torch (PyTorch 1.13 in Debian: the legacy JSON array). */
Test(kineto_gens, real_torch_exports_are_read, .timeout = 600)
{
	char py[8][256];
	size_t n_py = torch_pythons(py, 8);
	if (n_py == 0) {
		cr_skip_test("no interpreter imports torch (apt-get install python3-torch)");
	}
	for (size_t p = 0; p < n_py; p++) {
		const char *tmp = getenv("TMPDIR");
		char tdir[512];
		snprintf(tdir, sizeof(tdir), "%s/isc-torch-trace.XXXXXX", tmp ? tmp : "/tmp");
		char *d = mkdtemp(tdir);
		cr_assert_not_null(d, "mkdtemp %s", tdir);
		char cmd[4096], *out = NULL, *err = NULL;
		snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/analyzer/torch-chrome-trace.py' '%s'",
			 py[p], getenv("ISC_SRC"), d);
		cr_assert_eq(run(cmd, &out, &err), 0, "%s: %s", py[p], err);
		char name[32];
		unsigned long complete, threads;
		int consumed = 0, files = 0;
		for (const char *s = out;
		     sscanf(s, "%31s %lu %lu%n", name, &complete, &threads, &consumed) == 3;
		     s += consumed) {
			char path[600];
			snprintf(path, sizeof(path), "%s/%s.json", d, name);
			struct isc_trace *t = isc_trace_create();
			struct isc_diag dg = { "" };
			cr_assert_eq(isc_read_file(t, path, NULL, &dg), 0, "%s: %s", py[p], dg.msg);
			cr_assert_eq(isc_trace_finalize(t), 0);
			cr_assert_eq(t->inputs[0].events, complete, "%s %s", py[p], name);
			cr_assert_gt(complete, 20, "a forward and a backward: %s", name);
			cr_assert_eq(t->n_threads, threads, "%s %s", py[p], name);
			cr_assert_gt(count_events(t, ISC_T_CPU_OP), 0);
			isc_trace_destroy(t);
			snprintf(cmd, sizeof(cmd), "'%s' '%s'", getenv("ISC_ANALYZE"), path);
			cr_assert_eq(run(cmd, NULL, NULL), 0, "the report of %s", path);
			unlink(path);
			files++;
		}
		cr_assert_eq(files, 2, "%s: %s", py[p], out);
		free(out);
		free(err);
		rmdir(d);
	}
}

/* Runs the analyzer with ARGS on a file holding text; returns its status, stderr in *err. */
static int analyze_text(const char *text, const char *args, char **out, char **err)
{
	const char *tmp = getenv("TMPDIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/isc-unreadable.XXXXXX", tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "'%s' %s '%s'", getenv("ISC_ANALYZE"), args, path);
	int st = run(cmd, out, err);
	unlink(path);
	return st;
}

#define FOO "{\"ph\":\"X\",\"cat\":\"Foo\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}"

Test(kineto_gens, nothing_of_a_known_kind_is_an_error_that_says_what_it_saw)
{
	char *out = NULL, *err = NULL;
	const char *doc =
		"{\"traceEvents\":[" FOO "," FOO ",{\"ph\":\"X\",\"cat\":\"Bar\",\"name\":"
		"\"b\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},{\"ph\":\"M\",\"name\":"
		"\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"x\"}}]}";
	cr_assert_eq(analyze_text(doc, "", &out, &err), 3, "%s", out);
	cr_assert_not_null(strstr(err, "no events of a known kind in 4 trace events: saw cat Foo "
				       "(2), Bar (1); no cat: ph M (1)"),
			   "%s", err);
	cr_assert_str_eq(out, "");
	free(out);
	free(err);
	cr_assert_eq(analyze_text("[]", "", NULL, &err), 3);
	cr_assert_not_null(strstr(err, "the array is empty"), "%s", err);
	free(err);
	cr_assert_eq(analyze_text("[1, 2]", "", NULL, &err), 3);
	cr_assert_not_null(strstr(err, "array elements that are not objects (2)"), "%s", err);
	free(err);
	cr_assert_eq(analyze_text("{\"traceEvents\":[" FOO "]}", "--check 'idle<=100'", NULL, &err),
		     3, "a gate never passes on an unreadable input");
	free(err);
}

/* An empty window (a trace of our own format with no event, or a window with none in it):
 * no rule speaks of it, and a gate on it does not pass. */
Test(kineto_gens, nothing_is_judged_on_an_empty_window)
{
	const char *empty = "{\"format_version\": \"1.0\", \"trace_metadata\": {}, \"events\": []}";
	char cmd[1024], *out = NULL, *err = NULL;
	cr_assert_eq(analyze_text(empty, "-f json", &out, &err), 0, "%s", err);
	cr_assert_not_null(strstr(out, "\"no_data\""), "%s", out);
	cr_assert_not_null(strstr(out, "\"suggestions\": []"), "no suggestion: %.600s",
			   strstr(out, "\"suggestions\""));
	free(out);
	free(err);
	cr_assert_eq(analyze_text(empty, "--check 'idle<=100'", NULL, &err), 3);
	cr_assert_not_null(strstr(err, "nothing to check"), "%s", err);
	free(err);
	snprintf(cmd, sizeof(cmd), "'%s' --window 1:2 --check 'idle<=100' '%s'",
		 getenv("ISC_ANALYZE"), data_path("scenarios/input-wait.json"));
	cr_assert_eq(run(cmd, NULL, &err), 3);
	cr_assert_not_null(strstr(err, "nothing to check"), "%s", err);
	free(err);
}

/* The flows of the real traces: every f whose id has an s before it (counted apart from
 * the analyzer), each launch joining a call and its GPU work, each autograd link two
 * operators. */
Test(kineto_gens, real_traces_keep_their_flows)
{
	static const struct {
		const char *rel;
		size_t launch, fwdbwd;
	} cases[] = {
		{ "kineto/nccl_a100_rank0.pt.trace.json.gz", 6875, 0 },
		{ "kineto/amd_mi250.pt.trace.json.gz", 16, 4 },
		{ "kineto/simple_add_a100.pt.trace.json.gz", 139, 0 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct isc_trace *t = load(cases[c].rel);
		cr_assert_eq(flows_of(t, ISC_FLOW_LAUNCH), cases[c].launch, "%s", cases[c].rel);
		cr_assert_eq(flows_of(t, ISC_FLOW_FWDBWD), cases[c].fwdbwd, "%s", cases[c].rel);
		for (size_t i = 0; i < t->n_flows; i++) {
			const struct isc_ev *s = &t->ev[t->flows[i].src],
					    *d = &t->ev[t->flows[i].dst];
			cr_assert_leq(s->ts, d->ts, "%s", cases[c].rel);
			if (t->flows[i].kind == ISC_FLOW_LAUNCH) {
				cr_assert_eq(s->type, ISC_T_CUDA_API, "%s", cases[c].rel);
				cr_assert(isc_type_is_gpu(d->type), "%s", cases[c].rel);
				cr_assert_eq(s->corr, d->corr, "%s", cases[c].rel);
			} else {
				cr_assert_eq(s->type, ISC_T_CPU_OP, "%s", cases[c].rel);
				cr_assert_eq(d->type, ISC_T_CPU_OP, "%s", cases[c].rel);
			}
		}
		isc_trace_destroy(t);
	}
}
