/* SPDX-License-Identifier: MIT */
/*
 * A Kineto trace read on several threads (readers/reader-kineto-par.c) gives the model and
 * the report of the serial read: the real traces of data/kineto (inflated, so that they
 * can be split) and every generation of data/kineto-gens at parts down to one event, and
 * a trace made of what depends on the order (flows whose slice ends the part before,
 * names as tids, string flow ids, unknown categories summed as doubles, thread names before
 * and after, kernel shapes, GPU annotations). Gzip'd input and pipes, read ahead on a
 * thread of their own (input-source.c), give the bytes and the messages of the plain read.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "analyzer/base/string-table.h"
#include "analyzer/model/model-extra.h"
#include "analyzer/readers/input-source.h"
#include "analyzer/readers/reader.h"

/* The whole text of a file, inflated when gzip'd; prefetch: read ahead on a thread. */
static char *inflate_file(const char *path, bool prefetch, size_t *len)
{
	struct isc_source src;
	cr_assert_eq(isc_source_open_file(&src, path), 0, "%s: %s", path, src.err);
	if (prefetch) {
		cr_assert_eq(isc_source_prefetch(&src), 0);
	}
	size_t cap = 1 << 16, n = 0;
	char *s = malloc(cap + 1);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			s = realloc(s, cap + 1);
		}
		ssize_t r = isc_source_read(&src, (unsigned char *)s + n, cap - n);
		cr_assert_geq(r, 0, "%s: %s", path, src.err);
		if (r == 0) {
			break;
		}
		n += (size_t)r;
	}
	isc_source_close(&src);
	s[n] = '\0';
	*len = n;
	return s;
}

static struct isc_trace *read_with(const char *text, size_t len, unsigned threads, size_t split)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_read_opts o = { .format = "kineto", .threads = threads, .split = split };
	struct isc_diag d = { "" };
	cr_assert_eq(isc_read_buffer(t, "mem.json", text, len, &o, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

static void same_aggs(const struct isc_agg_list *a, const struct isc_agg_list *b)
{
	cr_assert_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		cr_assert_eq(a->v[i].name, b->v[i].name);
		cr_assert_eq(a->v[i].count, b->v[i].count);
		cr_assert_eq(memcmp(&a->v[i].total_us, &b->v[i].total_us, sizeof(double)), 0,
			     "the sums are the serial read's, to the bit");
		cr_assert_eq(a->v[i].bytes, b->v[i].bytes);
	}
}

static void same_str(const char *a, const char *b)
{
	cr_assert_str_eq(a != NULL ? a : "(none)", b != NULL ? b : "(none)");
}

static void same_model(const struct isc_trace *a, const struct isc_trace *b)
{
	cr_assert_eq(a->n, b->n);
	cr_assert_eq(memcmp(a->ev, b->ev, a->n * sizeof(*a->ev)), 0, "the events differ");
	cr_assert_eq(a->str->n, b->str->n);
	for (size_t i = 0; i < a->str->n; i++) {
		cr_assert_str_eq(isc_strtab_get(a->str, (uint32_t)i),
				 isc_strtab_get(b->str, (uint32_t)i));
	}
	cr_assert_eq(a->n_threads, b->n_threads);
	for (size_t i = 0; i < a->n_threads; i++) {
		cr_assert_eq(a->threads[i].tid, b->threads[i].tid);
		cr_assert_eq(a->threads[i].name, b->threads[i].name);
	}
	cr_assert_eq(a->n_flows, b->n_flows);
	for (size_t i = 0; i < a->n_flows; i++) {
		cr_assert_eq(a->flows[i].src, b->flows[i].src);
		cr_assert_eq(a->flows[i].dst, b->flows[i].dst);
		cr_assert_eq(a->flows[i].kind, b->flows[i].kind);
	}
	size_t na = a->extra != NULL ? a->extra->n_annot : 0;
	cr_assert_eq(na, b->extra != NULL ? b->extra->n_annot : 0);
	for (size_t i = 0; i < na; i++) {
		const struct isc_gpu_annot *x = &a->extra->annot[i], *y = &b->extra->annot[i];
		cr_assert(x->ts == y->ts && x->dur == y->dur && x->corr == y->corr &&
			  x->name == y->name && x->stream == y->stream && x->device == y->device);
	}
	const struct isc_input *ia = &a->inputs[0], *ib = &b->inputs[0];
	cr_assert_eq(ia->events, ib->events);
	cr_assert_eq(ia->skipped, ib->skipped);
	cr_assert_eq(ia->ignored, ib->ignored);
	cr_assert_eq(ia->pid, ib->pid);
	cr_assert_eq(ia->rank, ib->rank);
	same_str(ia->device_properties, ib->device_properties);
	same_str(ia->distributed_info, ib->distributed_info);
	same_aggs(&ia->unknown_cats, &ib->unknown_cats);
}

/* The JSON report of a model: the whole analysis on it. */
static char *report(const struct isc_trace *t)
{
	struct isc_analysis *a = analyse(t, NULL);
	char *s = render(t, a, "json", NULL);
	isc_analysis_destroy(a);
	return s;
}

/* text read serially, then on 3 threads in parts of each split: the same model and
 * report, from parts merged (not a serial read); returns the parts merged at `split`. */
static void as_serial(const char *what, const char *text, size_t len, bool whole_report)
{
	struct isc_trace *serial = read_with(text, len, 1, 0);
	cr_assert_gt(serial->n, 0, "%s", what);
	char *want = whole_report ? report(serial) : NULL;
	size_t splits[] = { 1, 300, 4096, 1 << 20 };
	for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		if (splits[i] * 2 > len) {
			continue;
		}
		uint64_t before = isc_read_parts_merged();
		struct isc_trace *par = read_with(text, len, 3, splits[i]);
		cr_assert_gt(isc_read_parts_merged() - before, 1, "%s, split %zu: parts merged",
			     what, splits[i]);
		same_model(serial, par);
		if (want != NULL) {
			char *got = report(par);
			cr_assert_str_eq(want, got, "%s, split %zu: the report differs", what,
					 splits[i]);
			free(got);
		}
		isc_trace_destroy(par);
	}
	free(want);
	isc_trace_destroy(serial);
}

static void each_file(const char *dir, bool whole_report)
{
	DIR *d = opendir(data_path(dir));
	cr_assert_not_null(d, "%s", dir);
	struct dirent *e;
	size_t n = 0;
	while ((e = readdir(d)) != NULL) {
		if (strstr(e->d_name, ".json") == NULL) {
			continue;
		}
		char rel[512];
		snprintf(rel, sizeof(rel), "%s/%s", dir, e->d_name);
		size_t len = 0;
		char *text = inflate_file(data_path(rel), false, &len);
		as_serial(rel, text, len, whole_report);
		free(text);
		n++;
	}
	closedir(d);
	cr_assert_geq(n, 5, "%s holds its traces", dir);
}

/* The real traces (up to 25 MB inflated, 200 k events): model and report. */
Test(parallel_kineto, real_traces_as_serial, .timeout = 600)
{
	each_file("kineto", true);
}

/* Every generation: PyTorch 1.8's string tids and "stream N" tids, the legacy export's
 * named processes and flows bound after their kernel, 2.x's ac2g flows. */
Test(parallel_kineto, every_generation_as_serial, .timeout = 300)
{
	each_file("kineto-gens", true);
}

/* A trace of what depends on the order; extra spliced into event `at` (-1: nowhere). */
static char *make_kineto(int n, int at, const char *extra)
{
	size_t cap = (size_t)n * 600 + 4096, len = 0;
	char *s = malloc(cap);
	len += (size_t)snprintf(s + len, cap - len,
				"{\"schemaVersion\":1,\"deviceProperties\":[{\"numSms\":108}],"
				"\"traceEvents\":[\n");
	for (int i = 0; i < n; i++) {
		const char *tid = i % 3 == 0 ? "\"worker-a\"" : i % 3 == 1 ? "\"1890023232\"" : "7";
		const char *sep = i + 1 < n ? ",\n" : "\n";
		const char *ex = i == at ? extra : "";
		switch (i % 6) {
		case 0: /* an operator and its runtime call starting with it, the launch flow
			 * right after the call (in the next part; bound by its track and time,
			 * it would go to the operator) */
			len += (size_t)snprintf(s + len, cap - len,
						"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"
						"\"aten::to\",\"pid\":1,\"tid\":%s,\"ts\":%d.5,"
						"\"dur\":4},\n"
						"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
						"\"cudaLaunchKernel\","
						"\"pid\":1,\"tid\":%s,\"ts\":%d.5,\"dur\":2,"
						"\"args\":{\"correlation\":%"
						"d}%s},\n"
						"{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\","
						"\"id\":%d,\"pid\":1,"
						"\"tid\":%s,\"ts\":%d.5}%s",
						tid, 10 * i, tid, 10 * i, i, ex, i, tid, 10 * i,
						sep);
			break;
		case 1: /* its kernel, with a shape of a few, and the flow's end */
			len += (size_t)snprintf(
				s + len, cap - len,
				"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,"
				"\"tid\":\"stream "
				"7\",\"ts\":%d,\"dur\":3,\"args\":{\"correlation\":%d,"
				"\"stream\":7,\"device\":0,\"grid\":[%d,1,1],\"block\":[128,1,1]}%"
				"s},\n"
				"{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%d,"
				"\"pid\":0,"
				"\"tid\":\"stream 7\",\"ts\":%d,\"bp\":\"e\"}%s",
				i % 5, 10 * i + 4, i - 1, 1 + i % 4, ex, i - 1, 10 * i + 4, sep);
			break;
		case 2: /* an operator, a string-id fwdbwd flow */
			len += (size_t)snprintf(s + len, cap - len,
						"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::"
						"op%d\",\"pid\":1,"
						"\"tid\":%s,\"ts\":%d,\"dur\":5%s},\n"
						"{\"ph\":\"%s\",\"cat\":\"fwdbwd\",\"name\":"
						"\"fwdbwd\",\"id\":\"fb%d\","
						"\"pid\":1,\"tid\":%s,\"ts\":%d}%s",
						i % 7, tid, 10 * i, ex, i % 12 == 2 ? "s" : "f",
						i / 12, tid, 10 * i, sep);
			break;
		case 3: /* a category no generation has, its durations not exact in binary */
			len += (size_t)snprintf(
				s + len, cap - len,
				"{\"ph\":\"X\",\"cat\":\"xpu_thing\",\"name\":\"x\",\"pid\":1,"
				"\"tid\":7,\"ts\":%d,\"dur\":0.%03d%s}%s",
				10 * i, 100 + i * 7 % 900, ex, sep);
			break;
		case 4: /* a thread's name, before and after its events */
			len += (size_t)snprintf(
				s + len, cap - len,
				"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,"
				"\"args\":{\"name\":\"thread %d\"}%s}%s",
				i % 4 == 0 ? 7 : 1890023232 + i % 2, i, ex, sep);
			break;
		default: /* a GPU-side annotation */
			len += (size_t)snprintf(
				s + len, cap - len,
				"{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"step%d\","
				"\"pid\":0,\"tid\":\"stream 7\",\"ts\":%d,\"dur\":9,"
				"\"args\":{\"stream\":7,\"device\":0}%s}%s",
				i, 10 * i, ex, sep);
			break;
		}
	}
	snprintf(s + len, cap - len, "],\"distributedInfo\":{\"rank\":3}}\n");
	return s;
}

Test(parallel_kineto, order_dependent_content_as_serial)
{
	char *text = make_kineto(600, -1, "");
	as_serial("made", text, strlen(text), true);
	free(text);
}

/* A negative numeric tid: a part's string tids are its negative ones, so the part that
 * holds one is read serially from there, with the same result. */
Test(parallel_kineto, negative_tid_read_serially_as_serial)
{
	char *text = make_kineto(600, 400, ",\"tid\":-5");
	size_t len = strlen(text);
	struct isc_trace *serial = read_with(text, len, 1, 0);
	uint64_t before = isc_read_parts_merged();
	struct isc_trace *par = read_with(text, len, 3, 2000);
	uint64_t merged = isc_read_parts_merged() - before;
	cr_assert_gt(merged, 1, "the parts before it merged");
	cr_assert_lt(merged, len / 2000, "not those from it on");
	same_model(serial, par);
	isc_trace_destroy(par);
	isc_trace_destroy(serial);
	free(text);
}

/* Broken input in a later part: the serial read's message. */
Test(parallel_kineto, error_in_a_later_part_as_serial)
{
	char *text = make_kineto(600, 500, ",\"args\":{]");
	size_t len = strlen(text);
	const char *args[] = { "1", "3" };
	char msg[2][512];
	for (size_t i = 0; i < 2; i++) {
		struct isc_trace *t = isc_trace_create();
		struct isc_read_opts o = { .threads = (unsigned)atoi(args[i]), .split = 1000 };
		struct isc_diag d = { "" };
		cr_assert_lt(isc_read_buffer(t, "mem.json", text, len, &o, &d), 0);
		snprintf(msg[i], sizeof(msg[i]), "%s", d.msg);
		isc_trace_destroy(t);
	}
	cr_assert_str_eq(msg[0], msg[1]);
	free(text);
}

/* The bytes read ahead on a thread are those read in turn: a gzip'd trace and a pipe. */
Test(parallel_kineto, read_ahead_gives_the_same_bytes)
{
	size_t n1 = 0, n2 = 0;
	const char *gz = data_path("kineto/nccl_a100_rank0.pt.trace.json.gz");
	char *a = inflate_file(gz, false, &n1), *b = inflate_file(gz, true, &n2);
	cr_assert_eq(n1, n2);
	cr_assert_gt(n1, 20u << 20, "more blocks than are read ahead");
	cr_assert_eq(memcmp(a, b, n1), 0);
	free(b);
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		for (size_t off = 0; off < n1;) {
			ssize_t w = write(fd[1], a + off, n1 - off);
			if (w <= 0) {
				_exit(1);
			}
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fd[1]);
	struct isc_trace *t = isc_trace_create(), *s = read_with(a, n1, 1, 0);
	struct isc_read_opts o = { .threads = 2 };
	struct isc_diag d = { "" };
	cr_assert_eq(isc_read_fd(t, "pipe", fd[0], &o, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	same_model(s, t);
	isc_trace_destroy(t);
	isc_trace_destroy(s);
	free(a);
}

/* A pipe that neither writes nor ends: the source closes (its reading thread cancelled). */
Test(parallel_kineto, read_ahead_of_a_silent_pipe_closes, .timeout = 30)
{
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	pid_t pid = fork();
	if (pid == 0) { /* the head and a little more, then silence */
		close(fd[0]);
		static char buf[ISC_SOURCE_HEAD + 100];
		memset(buf, ' ', sizeof(buf));
		buf[0] = '[';
		for (size_t off = 0; off < sizeof(buf);) {
			ssize_t w = write(fd[1], buf + off, sizeof(buf) - off);
			if (w <= 0) {
				_exit(1);
			}
			off += (size_t)w;
		}
		pause();
		_exit(0);
	}
	close(fd[1]);
	struct isc_source src;
	cr_assert_eq(isc_source_open_fd(&src, fd[0]), 0);
	cr_assert_eq(isc_source_prefetch(&src), 0);
	cr_assert_not_null(src.pf, "a pipe is read ahead");
	unsigned char buf[ISC_SOURCE_HEAD];
	cr_assert_eq(isc_source_read(&src, buf, sizeof(buf)), ISC_SOURCE_HEAD, "the head");
	isc_source_close(&src); /* the thread waits in read() for a block that never fills */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A gzip stream cut short: the message and the position of the plain read. */
Test(parallel_kineto, truncated_gzip_read_ahead_as_serial)
{
	size_t n = 0;
	char *gz = slurp(data_path("kineto/nccl_a100_rank0.pt.trace.json.gz"), &n);
	char msg[2][512];
	for (unsigned i = 0; i < 2; i++) {
		struct isc_trace *t = isc_trace_create();
		struct isc_read_opts o = { .threads = 1 + i };
		struct isc_diag d = { "" };
		int fd[2];
		cr_assert_eq(pipe(fd), 0);
		pid_t pid = fork();
		if (pid == 0) {
			close(fd[0]);
			ssize_t w = write(fd[1], gz, n / 2);
			_exit(w > 0 ? 0 : 1);
		}
		close(fd[1]);
		cr_assert_lt(isc_read_fd(t, "cut.json.gz", fd[0], &o, &d), 0);
		snprintf(msg[i], sizeof(msg[i]), "%s", d.msg);
		isc_trace_destroy(t);
	}
	cr_assert(strstr(msg[0], "truncated gzip") != NULL, "%s", msg[0]);
	cr_assert_str_eq(msg[0], msg[1]);
	free(gz);
}
