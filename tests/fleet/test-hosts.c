/* SPDX-License-Identifier: MIT */
/*
 * Traces of two hosts merged (analyzer/model/hosts.h): two synthetic InferScope traces of
 * one data-parallel job, each rank on its own machine. Host B's realtime clock is off by
 * a known amount (NTP error) and its trace starts a few collectives later than host A's;
 * every all-reduce ends at the same true instant on both ranks, give or take a few
 * microseconds of jitter. The collectives must reveal the error within the uncertainty
 * the analyzer states, and the report must say so.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/extras.h"
#include "analyzer/model/hosts.h"
#include "analyzer/readers/reader.h"
#include "analyzer/report/report.h"
#include "fleet-util.h"

#define STEPS 40
#define PERIOD_US 10000.0
#define REAL0_US 1700000000000000.0 /* true wall clock at true time 0 */

struct host {
	const char *name;
	int pid;
	double mono_off_us; /* monotonic = true time + this (each host booted apart) */
	double real_err_us; /* its realtime clock minus the true one */
	int first_step;	    /* the trace starts at this step */
	unsigned seed;
};

/* Jitter in [-3, 3] us, deterministic. */
static double jitter(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((double)((*s >> 8) % 6001) / 1000.0) - 3.0;
}

static void write_trace(const char *path, const struct host *h)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	unsigned s = h->seed;
	double anchor_true = 1000.0;
	fprintf(f,
		"{\"format_version\":\"1.0\",\"trace_metadata\":{\"pid\":%d,\"hostname\":\"%s\","
		"\"end_reason\":\"exit\",\"complete\":true,\"clock\":{\"domain\":"
		"\"CLOCK_MONOTONIC\",\"unit\":\"us\",\"anchor_monotonic_us\":%.3f,"
		"\"anchor_realtime_us\":%.3f},\"dropped_events\":{\"total\":0,\"by_kind\":{},"
		"\"by_thread\":{}},\"cupti\":{\"status\":\"active\",\"dropped_records\":0}},"
		"\"system_info\":{\"cpu_count\":4},\"events\":[",
		h->pid, h->name, anchor_true + h->mono_off_us,
		REAL0_US + anchor_true + h->real_err_us);
	int id = 0;
	for (int k = h->first_step; k < STEPS; k++) {
		double t0 = 2000.0 + k * PERIOD_US; /* true time of the step's start */
		double end = t0 + 8000.0;	    /* the all-reduce's true end, on every rank */
		double e = end + jitter(&s);
		double compute = 5000.0 + 1000.0 * (h->pid % 2) + jitter(&s) * 100;
		double m = h->mono_off_us;
		fprintf(f,
			"%s{\"id\":%d,\"type\":\"cuda_api\",\"name\":\"cudaLaunchKernel\","
			"\"timestamp_start_us\":%.3f,\"duration_us\":5.0,\"metadata\":{\"thread_"
			"id\":1,"
			"\"correlation_id\":%d,\"stream_id\":0,\"return_code\":0,\"blocked\":false}"
			"}",
			id ? "," : "", id, t0 + m, 2 * k + 1);
		id++;
		fprintf(f,
			",{\"id\":%d,\"type\":\"gpu_kernel\",\"name\":\"gemm_bf16\","
			"\"timestamp_start_us\":%.3f,\"duration_us\":%.3f,\"metadata\":{\"thread_"
			"id\":1,"
			"\"correlation_id\":%d,\"device_id\":0,\"stream_id\":7}}",
			id, t0 + 20 + m, compute, 2 * k + 1);
		id++;
		fprintf(f,
			",{\"id\":%d,\"type\":\"cuda_api\",\"name\":\"cudaLaunchKernel\","
			"\"timestamp_start_us\":%.3f,\"duration_us\":5.0,\"metadata\":{\"thread_"
			"id\":1,"
			"\"correlation_id\":%d,\"stream_id\":0,\"return_code\":0,\"blocked\":false}"
			"}",
			id, t0 + 10 + m, 2 * k + 2);
		id++;
		double start = t0 + 20 + compute;
		fprintf(f,
			",{\"id\":%d,\"type\":\"gpu_kernel\",\"name\":"
			"\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\",\"timestamp_start_us\":%.3f,"
			"\"duration_us\":%.3f,\"metadata\":{\"thread_id\":1,\"correlation_id\":%d,"
			"\"device_id\":0,\"stream_id\":20}}",
			id, start + m, e - start, 2 * k + 2);
		id++;
	}
	fprintf(f, "],\"relationships\":{\"scopes\":[]}}\n");
	cr_assert_eq(fclose(f), 0);
}

TestSuite(hosts, .init = fleet_dir_setup, .fini = fleet_dir_teardown);

static struct isc_trace *read_two(const struct host *a, const struct host *b)
{
	char pa[256], pb[256];
	snprintf(pa, sizeof(pa), "%s/a.json", fleet_dir);
	snprintf(pb, sizeof(pb), "%s/b.json", fleet_dir);
	write_trace(pa, a);
	write_trace(pb, b);
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d;
	cr_assert_eq(isc_read_file(t, pa, NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_read_file(t, pb, NULL, &d), 0, "%s", d.msg);
	cr_assert_eq(isc_trace_finalize(t), 0);
	return t;
}

Test(hosts, offset_from_collectives_within_the_stated_uncertainty)
{
	/* B booted 3.7 days after A; its realtime clock runs 2.345 ms ahead */
	struct host a = { "node-a", 101, 3.25e11, 0, 0, 7 };
	struct host b = { "node-b", 202, 5e9, 2345.0, 3, 11 };
	struct isc_trace *t = read_two(&a, &b);
	cr_assert_not_null(t->hosts, "two hostnames: the hosts are aligned");
	cr_assert_eq(t->hosts->n, 2);
	const struct isc_host_clock *ref = &t->hosts->v[0], *c = &t->hosts->v[1];
	cr_assert(ref->reference);
	cr_assert_str_eq(isc_trace_str(t, c->host), "node-b");
	cr_assert(c->anchored);
	cr_assert(c->estimated, "40 all-reduces on each side: the offset is estimated");
	cr_assert_geq(c->matched, STEPS - 3 - 1, "%u collectives matched", c->matched);
	cr_assert_eq(c->lag, 3, "host B's first collective is host A's fourth, not %lld",
		     (long long)c->lag);
	/* B's realtime clock is 2.345 ms ahead: its events land 2.345 ms late by the
	 * anchors, and the collectives pull them back */
	double err_ns = fabs((double)c->offset_ns + 2345e3);
	cr_assert_leq(err_ns, (double)c->uncertainty_ns,
		      "estimate %lld ns, truth -2345000 ns, stated uncertainty %lld ns",
		      (long long)c->offset_ns, (long long)c->uncertainty_ns);
	cr_assert_leq(c->uncertainty_ns, 10000, "a jitter of +/-3 us: uncertainty %lld ns",
		      (long long)c->uncertainty_ns);
	/* after the shift every all-reduce of B ends with A's, within the uncertainty */
	int64_t ends[2][STEPS];
	int n[2] = { 0, 0 };
	for (size_t i = 0; i < t->n; i++) {
		const struct isc_ev *e = &t->ev[i];
		if (e->type == ISC_T_KERNEL && strstr(isc_trace_str(t, e->name), "nccl")) {
			ends[e->input][n[e->input]++] = e->ts + e->dur;
		}
	}
	cr_assert_eq(n[0], STEPS);
	cr_assert_eq(n[1], STEPS - 3);
	for (int k = 0; k < n[1]; k++) {
		int64_t d = ends[1][k] - ends[0][k + 3];
		cr_expect_leq(llabs(d), c->uncertainty_ns + 6000, "collective %d: %lld ns apart", k,
			      (long long)d);
	}
	isc_trace_destroy(t);
}

Test(hosts, report_states_the_offset_and_the_ranks)
{
	struct host a = { "node-a", 101, 5e9, 0, 0, 7 };
	struct host b = { "node-b", 202, 2e9, -800.0, 0, 11 };
	struct isc_trace *t = read_two(&a, &b);
	struct isc_analysis *an = NULL;
	struct isc_diag d;
	struct isc_analyze_opts o = { 0 };
	cr_assert_eq(isc_analyze(t, &o, &an, &d), 0, "%s", d.msg);
	cr_assert_eq(an->extras->n_ranks, 2, "one rank per host");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct isc_report_opts ro = { .top = 5, .version = "test" };
	cr_assert_eq(isc_writer_find("md")->write(f, t, an, &ro), 0);
	fclose(f);
	cr_assert_not_null(strstr(buf, "host node-b: realtime anchors shift it by"), "%s", buf);
	cr_assert_not_null(strstr(buf, "NCCL kernel ends matched"));
	free(buf);
	f = open_memstream(&buf, &len);
	cr_assert_eq(isc_writer_find("json")->write(f, t, an, &ro), 0);
	fclose(f);
	cr_assert_not_null(strstr(buf, "\"hosts\": ["), "%s", buf);
	cr_assert_not_null(strstr(buf, "\"collectives_matched\": 40"));
	/* -800 us of clock error: the estimate says +800 us, to the microsecond */
	const char *off = strstr(buf, "\"offset_us\": ");
	off = off ? strstr(off + 1, "\"offset_us\": ") : NULL; /* the second host's */
	cr_assert_not_null(off);
	double us = atof(off + strlen("\"offset_us\": "));
	cr_assert(fabs(us - 800.0) < 10.0, "offset_us %f", us);
	free(buf);
	isc_analysis_destroy(an);
	isc_trace_destroy(t);
}

Test(hosts, one_host_is_left_alone)
{
	struct host a = { "node-a", 101, 5e9, 0, 0, 7 };
	struct host b = { "node-a", 102, 5e9, 0, 0, 11 };
	struct isc_trace *t = read_two(&a, &b);
	cr_assert_null(t->hosts, "one hostname: one monotonic clock, nothing shifted");
	isc_trace_destroy(t);
}
