/* SPDX-License-Identifier: MIT */
/*
 * A real Prometheus server (Debian's prometheus package) scrapes `inferscope watch` on
 * loopback; its HTTP API must then answer with the watcher's values: the verdict as a
 * stateset, the breakdown, GPU time by kernel category, the launch counter. Prometheus
 * asks for OpenMetrics, so this reads the OpenMetrics exposition through Prometheus's
 * own parser. Polls with a bounded retry; asserts values, never timings.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <yajl/yajl_tree.h>

#include "fleet-util.h"
#include "prom-util.h"

TestSuite(prometheus, .init = fleet_dir_setup, .fini = fleet_dir_teardown, .timeout = 300);

/* Polls the query until it has a value (bounded: 90 s). */
static double wait_value(const char *prom, const char *promql)
{
	return prom_wait(prom, promql, 90);
}

Test(prometheus, scrapes_the_watcher)
{
	const char *prometheus = getenv("ISC_PROMETHEUS");
	if (prometheus == NULL || *prometheus == '\0') {
		cr_skip_test("prometheus is not installed (Debian package 'prometheus', which "
			     "scripts/setup.sh installs for the tests)");
	}
	char path[4200], seg[4200], log[4200];
	snprintf(path, sizeof(path), "%s/workloads/gpu-bound.json.gz", getenv("ISC_DATA"));
	snprintf(seg, sizeof(seg), "%s/segs", fleet_dir);
	cr_assert_eq(mkdir(seg, 0700), 0);
	snprintf(seg, sizeof(seg), "%s/segs/trace.2171.seg-000001.spill", fleet_dir);
	fleet_put_segment(path, seg);
	snprintf(seg, sizeof(seg), "%s/segs", fleet_dir);
	snprintf(log, sizeof(log), "%s/watch.log", fleet_dir);
	const char *wargv[] = { getenv("ISC_WATCH"), "--listen", "127.0.0.1:0", seg, NULL };
	pid_t watch = fleet_spawn(wargv, log);
	char *addr = fleet_wait_line(log, "listening on http://", 60);
	cr_assert_not_null(addr, "the watcher did not start");
	*strchr(addr, '/') = '\0';

	/* Prometheus with a scrape config of its own, on a free loopback port */
	char prom[64];
	pid_t pp = prom_start(prometheus, fleet_dir, addr, prom);

	cr_expect_eq(wait_value(prom, "up{job=\"inferscope\"}"), 1, "the target is up");
	cr_expect_eq(
		wait_value(prom,
			   "inferscope_verdict{pid=\"2171\",inferscope_verdict=\"gpu_bound\"}"),
		1);
	cr_expect_eq(
		wait_value(prom,
			   "inferscope_verdict{pid=\"2171\",inferscope_verdict=\"cpu_bound\"}"),
		0);
	double gemm =
		wait_value(prom, "inferscope_gpu_seconds_total{pid=\"2171\",category=\"gemm\"}");
	cr_expect(fabs(gemm - 0.240) < 1e-9, "gemm: %g s", gemm);
	double att = wait_value(
		prom, "inferscope_gpu_seconds_total{pid=\"2171\",category=\"attention\"}");
	cr_expect(fabs(att - 0.090) < 1e-9, "attention: %g s", att);
	cr_expect_eq(wait_value(prom, "inferscope_cuda_launches_total{pid=\"2171\"}"), 240);
	double share = wait_value(prom, "sum(inferscope_breakdown_ratio{pid=\"2171\"})");
	cr_expect(fabs(share - 1) < 1e-9, "the shares sum to %g", share);
	double gc = wait_value(prom,
			       "inferscope_breakdown_ratio{pid=\"2171\",category=\"gpu_compute\"}");
	cr_expect(gc > 0.9 && gc < 1, "gpu_compute share %g", gc);
	/* one series per state, whatever the verdict: the ten of isc_bound_name() */
	cr_expect_eq(wait_value(prom, "count(inferscope_verdict{pid=\"2171\"})"), 10);

	int st = fleet_stop(pp);
	cr_expect(WIFEXITED(st), "prometheus ended (status %#x)", st);
	st = fleet_stop(watch);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	free(addr);
}
