/* SPDX-License-Identifier: MIT */
#include "prom-util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "fleet-util.h"

pid_t prom_start(const char *prometheus, const char *dir, const char *target, char *addr)
{
	char cfg[4200], cfgarg[4300], data[4300], listen[128], log[4200];
	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
	FILE *f = fopen(cfg, "w");
	cr_assert_not_null(f, "%s", cfg);
	fprintf(f,
		"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
		"scrape_configs:\n  - job_name: inferscope\n    static_configs:\n"
		"      - targets: ['%s']\n",
		target);
	cr_assert_eq(fclose(f), 0);
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", cfg);
	snprintf(data, sizeof(data), "--storage.tsdb.path=%s/data", dir);
	snprintf(addr, 64, "127.0.0.1:%d", fleet_free_port());
	snprintf(listen, sizeof(listen), "--web.listen-address=%s", addr);
	snprintf(log, sizeof(log), "%s/prometheus.log", dir);
	const char *argv[] = { prometheus, cfgarg, data, listen, "--log.level=warn", NULL };
	return fleet_spawn(argv, log);
}

double prom_query(const char *prom, const char *promql, double at, double *eval_time)
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
	if (at > 0) {
		snprintf(target + k, sizeof(target) - k, "&time=%.3f", at);
	}
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
			if (eval_time != NULL && YAJL_IS_NUMBER(YAJL_GET_ARRAY(val)->values[0])) {
				*eval_time = YAJL_GET_DOUBLE(YAJL_GET_ARRAY(val)->values[0]);
			}
		}
	}
	yajl_tree_free(root);
	return v;
}

double prom_wait(const char *prom, const char *promql, double timeout_s)
{
	for (int i = 0; i < (int)(timeout_s * 10); i++) {
		double v = prom_query(prom, promql, 0, NULL);
		if (!isnan(v)) {
			return v;
		}
		fleet_sleep_ms(100);
	}
	cr_assert_fail("Prometheus has no value for %s after %g s", promql, timeout_s);
	return NAN;
}
