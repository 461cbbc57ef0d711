/* SPDX-License-Identifier: MIT */
/* Readers: formats, detection, merging, and one clear line for every kind of bad input. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"
#include "analyzer/model/model-extra.h"
#include "analyzer/readers/reader.h"

static int read_text(const char *text, size_t n, struct isc_diag *d, struct isc_trace **out)
{
	struct isc_trace *t = isc_trace_create();
	int r = isc_read_buffer(t, "mem.json", text, n, NULL, d);
	if (out != NULL && r == 0) {
		*out = t;
	} else {
		isc_trace_destroy(t);
	}
	return r;
}

Test(readers, kineto_gzip_fixture)
{
	struct isc_trace *t = load("kineto/simple_add_a100.pt.trace.json.gz");
	cr_assert_str_eq(t->inputs[0].format, "kineto");
	cr_assert_eq(count_events(t, ISC_T_KERNEL), 79);
	cr_assert_eq(count_events(t, ISC_T_H2D), 16);
	cr_assert_eq(count_events(t, ISC_T_MEMSET), 3);
	cr_assert_eq(count_events(t, ISC_T_GPU_SYNC), 41);
	cr_assert_eq(count_events(t, ISC_T_CUDA_API), 331);
	cr_assert_eq(t->inputs[0].pid, 493459);
	for (size_t i = 1; i < t->n; i++) {
		cr_assert_leq(t->ev[i - 1].ts, t->ev[i].ts, "finalize sorts events");
	}
	size_t linked = 0;
	for (size_t i = 0; i < t->n; i++) {
		linked +=
			t->ev[i].type == ISC_T_KERNEL && isc_trace_launch_of(t, &t->ev[i]) != NULL;
	}
	cr_assert_eq(linked, 79, "every kernel finds its launch through the correlation id");
	isc_trace_destroy(t);
}

Test(readers, inferscope_scenario)
{
	struct isc_trace *t = load("scenarios/io-wait.json");
	cr_assert_str_eq(t->inputs[0].format, "inferscope");
	cr_assert_str_eq(t->inputs[0].format_version, "1.0");
	cr_assert_eq(t->inputs[0].pid, 1000);
	cr_assert_eq(t->inputs[0].cpu_count, 8);
	cr_assert_str_eq(isc_trace_str(t, t->inputs[0].cupti_status), "active");
	cr_assert_eq(count_events(t, ISC_T_SYSCALL), 20);
	isc_trace_destroy(t);
}

Test(readers, prototype_calls_pair_with_returns)
{
	const char text[] =
		"{\"events\": ["
		"{\"type\": \"cpu_call\", \"name\": \"tokenize\", \"timestamp_start_us\": 100,"
		" \"timestamp_end_us\": 100, \"thread_id\": 140234234234, \"metadata\": {}},"
		"{\"type\": \"cpu_return\", \"name\": \"tokenize\", \"timestamp_us\": 350,"
		" \"thread_id\": 140234234234},"
		"{\"type\": \"gpu_kernel\", \"name\": \"gpu_kernel\", \"timestamp_us\": 400,"
		" \"duration_us\": 1000, \"stream_id\": null,"
		" \"metadata\": {\"source\": \"synthetic\"}},"
		"{\"type\": \"h2d_copy\", \"name\": \"tensor_h2d_4096\", \"timestamp_us\": 380,"
		" \"duration_us\": 10, \"bytes\": 4096}]}";
	struct isc_diag d;
	struct isc_trace *t = NULL;
	cr_assert_eq(read_text(text, sizeof(text) - 1, &d, &t), 0, "%s", d.msg);
	cr_assert_str_eq(t->inputs[0].format, "bare");
	cr_assert_eq(t->n, 3);
	cr_assert_eq(t->ev[0].type, ISC_T_SCOPE);
	cr_assert_eq(t->ev[0].dur, 250000, "duration comes from the matching cpu_return");
	cr_assert_eq(t->threads[t->ev[0].thread].tid, 140234234234LL);
	cr_assert_eq(t->ev[2].v.bytes, 4096);
	isc_trace_destroy(t);
}

Test(readers, traces_of_one_host_merge)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d;
	cr_assert_eq(isc_read_file(t, data_path("scenarios/balanced.json"), NULL, &d), 0);
	cr_assert_eq(isc_read_file(t, data_path("scenarios/gpu-bound.json"), NULL, &d), 0);
	cr_assert_eq(isc_trace_finalize(t), 0);
	cr_assert_eq(t->n_inputs, 2);
	cr_assert_eq(t->n, t->inputs[0].events + t->inputs[1].events);
	/* Correlation ids restart in each process: links stay within an input. */
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *api = isc_trace_launch_of(t, &t->ev[i]);
		if (isc_type_is_gpu(t->ev[i].type) && api != NULL) {
			cr_assert_eq(api->input, t->ev[i].input);
		}
	}
	isc_trace_destroy(t);
}

struct bad_case {
	const char *text;
	const char *expect;
};

Test(readers, bad_input_gets_one_clear_line)
{
	static const struct bad_case cases[] = {
		{ "", "empty input" },
		{ "hello", "not JSON" },
		{ "{\"format_version\": \"1.0\", \"trace_metadata\": {}, \"events\": [",
		  "end of input" },
		{ "{\"format_version\": \"1.0\", \"events\": [{\"id\": 0,, }]}", "not valid JSON" },
		{ "{\"format_version\": \"1.0\", \"trace_metadata\": {}, \"events\": [{\"id\": 0,"
		  " \"type\": \"cpu_call\", \"name\": \"a\", \"timestamp_start_us\": 1,"
		  " \"duration_us\": 1, \"metadata\": {\"thread_id\": \"x\"}}]}",
		  "event 0 (byte" },
		{ "{\"traceEvents\": {}}", "traceEvents: expected an array" },
		{ "{\"format_version\": \"1.0\", \"trace_metadata\": {}, \"events\": []} x",
		  "not valid JSON" },
		{ "{\"other\": 1}", "not a trace" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct isc_diag d = { "" };
		int r = read_text(cases[i].text, strlen(cases[i].text), &d, NULL);
		cr_assert_lt(r, 0, "case %zu must fail", i);
		cr_assert(strncmp(d.msg, "mem.json: ", 10) == 0, "names the input: %s", d.msg);
		cr_assert(strstr(d.msg, cases[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i,
			  d.msg, cases[i].expect);
		cr_assert_null(strchr(d.msg, '\n'), "one line");
	}
}

Test(readers, truncated_gzip_and_spill)
{
	size_t n;
	char *gz = slurp(data_path("kineto/compare_base.json.gz"), &n);
	cr_assert_not_null(gz);
	struct isc_diag d;
	cr_assert_lt(read_text(gz, n / 2, &d, NULL), 0);
	cr_assert(strstr(d.msg, "gzip") != NULL || strstr(d.msg, "end of input") != NULL, "%s",
		  d.msg);
	free(gz);
	char spill[64] = "ISCSPILL";
	cr_assert_lt(read_text(spill, sizeof(spill), &d, NULL), 0);
	cr_assert(strstr(d.msg, "spill") != NULL, "%s", d.msg);
}

Test(readers, hostile_nesting_is_bounded)
{
	size_t depth = 200000;
	char *text = malloc(depth * 2 + 100);
	size_t n = (size_t)sprintf(text, "{\"format_version\":\"1.0\",\"trace_metadata\":");
	for (size_t i = 0; i < depth; i++) {
		text[n++] = '[';
	}
	struct isc_diag d;
	cr_assert_lt(read_text(text, n, &d, NULL), 0);
	cr_assert(strstr(d.msg, "nested too deeply") != NULL ||
			  strstr(d.msg, "expected an object") != NULL,
		  "%s", d.msg);
	free(text);
}

/* The ptr of an event call is the cudaEvent_t the graph pairs calls by; on other calls
 * (an allocation) it is not read, and their bytes stay. */
Test(readers, event_handles_from_ptr)
{
	static const char text[] =
		"{\"format_version\": \"1.0\", \"trace_metadata\": {\"pid\": 7}, \"events\": ["
		"{\"id\": 1, \"type\": \"cuda_api\", \"name\": \"cudaEventRecord\", "
		"\"timestamp_start_us\": 10, \"duration_us\": 1, \"metadata\": {\"thread_id\": 7, "
		"\"correlation_id\": 1, \"stream_id\": 2, \"return_code\": 0, "
		"\"ptr\": \"0x5646f778db60\"}},"
		"{\"id\": 2, \"type\": \"cuda_api\", \"name\": \"cudaStreamWaitEvent_ptsz\", "
		"\"timestamp_start_us\": 12, \"duration_us\": 1, \"metadata\": {\"thread_id\": 7, "
		"\"correlation_id\": 2, \"stream_id\": 3, \"return_code\": 0, "
		"\"ptr\": \"0xABCDEF\"}},"
		"{\"id\": 3, \"type\": \"cuda_api\", \"name\": \"cudaMalloc\", "
		"\"timestamp_start_us\": 14, \"duration_us\": 1, \"metadata\": {\"thread_id\": 7, "
		"\"correlation_id\": 3, \"return_code\": 0, \"bytes\": 4096, "
		"\"ptr\": \"0x7f0000000000\"}},"
		"{\"id\": 4, \"type\": \"cuda_api\", \"name\": \"cudaEventSynchronize\", "
		"\"timestamp_start_us\": 16, \"duration_us\": 1, \"metadata\": {\"thread_id\": 7, "
		"\"correlation_id\": 4, \"return_code\": 0, \"ptr\": \"not-hex\"}}]}";
	struct isc_diag d;
	struct isc_trace *t = NULL;
	cr_assert_eq(read_text(text, sizeof(text) - 1, &d, &t), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	cr_assert_eq(t->n, 4);
	cr_assert_eq(isc_api_event_call(isc_trace_str(t, t->ev[0].name)), ISC_EC_RECORD);
	cr_assert_eq(t->ev[0].v.handle, UINT64_C(0x5646f778db60));
	cr_assert_eq(t->ev[0].stream, 2);
	cr_assert_eq(isc_api_event_call(isc_trace_str(t, t->ev[1].name)), ISC_EC_WAIT);
	cr_assert_eq(t->ev[1].v.handle, UINT64_C(0xabcdef));
	cr_assert_eq(isc_api_event_call(isc_trace_str(t, t->ev[2].name)), ISC_EC_NONE);
	cr_assert_eq(t->ev[2].v.bytes, 4096, "an allocation keeps its size");
	cr_assert_eq(isc_api_event_call(isc_trace_str(t, t->ev[3].name)), ISC_EC_SYNC);
	cr_assert_eq(t->ev[3].v.handle, 0, "an unreadable handle is no handle");
	isc_trace_destroy(t);
}

/* A wait for a child keeps the pid its return value names (not waitid's 0, nor a failed
 * call's -1); other syscalls keep their fd. */
Test(readers, child_waits_name_their_child)
{
	static const char *const calls[] = {
		"\"waitpid\", \"syscall_number\": 61, \"return_value\": 4242, \"category\": "
		"\"wait\"",
		"\"wait4\", \"syscall_number\": 61, \"return_value\": -1, \"errno\": 10, "
		"\"category\": \"wait\"",
		"\"waitid\", \"syscall_number\": 247, \"return_value\": 0, \"category\": \"wait\"",
		"\"read\", \"syscall_number\": 0, \"fd\": 3, \"return_value\": 4242, "
		"\"category\": \"io\"",
	};
	static const uint32_t aux[] = { 4242, UINT32_MAX, UINT32_MAX, 3 };
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		char text[1024];
		const char *name_end = strchr(calls[i] + 1, '"');
		int n = snprintf(text, sizeof(text),
				 "{\"format_version\": \"1.0\", \"trace_metadata\": {\"pid\": 7}, "
				 "\"events\": [{\"id\": 1, \"type\": \"cpu_syscall\", \"name\": "
				 "%.*s, \"timestamp_start_us\": 10, \"duration_us\": 500, "
				 "\"metadata\": {\"thread_id\": 7, %s}}]}",
				 (int)(name_end + 1 - calls[i]), calls[i], name_end + 3);
		struct isc_diag d;
		struct isc_trace *t = NULL;
		cr_assert_eq(read_text(text, (size_t)n, &d, &t), 0, "%s: %s", text, d.msg);
		cr_assert_eq(t->n, 1);
		cr_assert_eq(t->ev[0].aux, aux[i], "%s: aux %u", calls[i], t->ev[0].aux);
		cr_assert_eq((t->ev[0].flags & ISC_F_CHILD_PID) != 0, i == 0, "%s", calls[i]);
		isc_trace_destroy(t);
	}
}

/* Kernel geometry (export only): shapes are kept once; past 65,534 distinct shapes the
 * rest go, keyed, into the overflow table; every kernel finds its own. */
Test(readers, kernel_geometry_shapes_and_overflow)
{
	struct isc_trace *t = isc_trace_create();
	const size_t n = 140000;
	for (size_t i = 0; i < n; i++) {
		struct isc_ev *k = isc_trace_push(t);
		cr_assert_not_null(k);
		k->type = ISC_T_KERNEL;
		k->ts = (int64_t)i * 10;
		k->corr = i + 1;
		k->stream = 7;
		/* two kernels per shape until the table is full: regs = i / 2 */
		struct isc_kernel_geom g = { .grid = { 4, 1, 1 },
					     .block = { 128, 1, 1 },
					     .regs = (int32_t)(i / 2),
					     .smem = 0 };
		cr_assert_eq(isc_trace_add_geom(t, k, &g), 0);
	}
	cr_assert_eq(isc_trace_finalize(t), 0);
	cr_assert_eq(t->extra->n_shape, ISC_GEOM_OVERFLOW - 1);
	cr_assert_eq(t->ev[0].geom, t->ev[1].geom, "one shape, stored once");
	cr_assert_eq(t->extra->n_geom, n - 2 * (ISC_GEOM_OVERFLOW - 1));
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_kernel_geom *g = isc_trace_geom_of(t, &t->ev[i]);
		cr_assert_not_null(g, "kernel %zu", i);
		cr_assert_eq(g->regs, (int32_t)((t->ev[i].corr - 1) / 2), "kernel %zu", i);
		cr_assert_eq(g->block[0], 128);
	}
	isc_trace_destroy(t);
}
