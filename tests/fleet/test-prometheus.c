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

static char dir[] = "/tmp/isc-prom-XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(prometheus, .init = setup, .fini = teardown, .timeout = 300);

/* The query's single value, or NAN while Prometheus has none. */
static double query(const char *prom, const char *promql)
{
	char target[2048] = "/api/v1/query?query=";
	size_t k = strlen(target);
	for (const char *p = promql; *p && k + 4 < sizeof(target); p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_') {
			target[k++] = *p;
		} else {
			k += (size_t)snprintf(target + k, 4, "%%%02X", (unsigned char)*p);
		}
	}
	target[k] = '\0';
	char *body = NULL;
	if (fleet_http(prom, "GET", target, NULL, &body, NULL, NULL) != 200) {
		free(body);
		return NAN;
	}
	char err[256];
	yajl_val root = yajl_tree_parse(body, err, sizeof(err));
	free(body);
	const char *rpath[] = { "data", "result", NULL };
	yajl_val result = root ? yajl_tree_get(root, rpath, yajl_t_array) : NULL;
	double v = NAN;
	if (result != NULL && YAJL_GET_ARRAY(result)->len == 1) {
		const char *vpath[] = { "value", NULL };
		yajl_val val =
			yajl_tree_get(YAJL_GET_ARRAY(result)->values[0], vpath, yajl_t_array);
		if (val != NULL && YAJL_GET_ARRAY(val)->len == 2 &&
		    YAJL_IS_STRING(YAJL_GET_ARRAY(val)->values[1])) {
			const char *str = YAJL_GET_STRING(YAJL_GET_ARRAY(val)->values[1]);
			v = str != NULL ? atof(str) : NAN;
		}
	}
	yajl_tree_free(root);
	return v;
}

/* Polls the query until it has a value (bounded: 90 s). */
static double wait_value(const char *prom, const char *promql)
{
	for (int i = 0; i < 900; i++) {
		double v = query(prom, promql);
		if (!isnan(v)) {
			return v;
		}
		fleet_sleep_ms(100);
	}
	cr_assert_fail("Prometheus has no value for %s after 90 s", promql);
	return NAN;
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
	snprintf(seg, sizeof(seg), "%s/segs", dir);
	cr_assert_eq(mkdir(seg, 0700), 0);
	snprintf(seg, sizeof(seg), "%s/segs/trace.2171.seg-000001.spill", dir);
	fleet_put_segment(path, seg);
	snprintf(seg, sizeof(seg), "%s/segs", dir);
	snprintf(log, sizeof(log), "%s/watch.log", dir);
	const char *wargv[] = { getenv("ISC_WATCH"), "--listen", "127.0.0.1:0", seg, NULL };
	pid_t watch = fleet_spawn(wargv, log);
	char *addr = fleet_wait_line(log, "listening on http://", 60);
	cr_assert_not_null(addr, "the watcher did not start");
	*strchr(addr, '/') = '\0';

	/* Prometheus with a scrape config of its own, on a free loopback port */
	char cfg[4200], data[4200], listen[128], prom[64], plog[4200];
	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
	FILE *f = fopen(cfg, "w");
	fprintf(f,
		"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
		"scrape_configs:\n  - job_name: inferscope\n    static_configs:\n"
		"      - targets: ['%s']\n",
		addr);
	fclose(f);
	snprintf(data, sizeof(data), "--storage.tsdb.path=%s/data", dir);
	int port = fleet_free_port();
	snprintf(prom, sizeof(prom), "127.0.0.1:%d", port);
	snprintf(listen, sizeof(listen), "--web.listen-address=%s", prom);
	char cfgarg[4300];
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", cfg);
	snprintf(plog, sizeof(plog), "%s/prometheus.log", dir);
	const char *pargv[] = { prometheus, cfgarg, data, listen, "--log.level=warn", NULL };
	pid_t pp = fleet_spawn(pargv, plog);

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
	/* one series per state: five, whatever the verdict */
	cr_expect_eq(wait_value(prom, "count(inferscope_verdict{pid=\"2171\"})"), 5);

	int st = fleet_stop(pp);
	cr_expect(WIFEXITED(st), "prometheus ended (status %#x)", st);
	st = fleet_stop(watch);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	free(addr);
}
