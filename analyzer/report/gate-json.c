/* SPDX-License-Identifier: MIT */
/*
 * The gate in the JSON result: `gate: {passed, failed, baseline, checks: [...],
 * diff: {...}}`. A later run reading this file as its baseline skips the object.
 */
#include "analyzer/gate/gate.h"
#include "analyzer/report/report.h"
#include "format/json-writer.h"

static void item(struct isc_json *j, const struct isc_gate_item *it)
{
	isc_json_begin_object(j);
	isc_json_kv_string(j, "kind", it->kind == ISC_GATE_BUDGET ? "budget" : "check");
	isc_json_kv_string(j, "name", it->name);
	isc_json_kv_bool(j, "passed", it->passed);
	isc_json_kv_string(j, "value", it->value);
	isc_json_kv_string(j, "expected", it->expected);
	isc_json_kv_string(j, "detail", it->detail);
	if (it->kind == ISC_GATE_BUDGET) {
		isc_json_kv_double(j, "baseline_percentage", it->base, 2);
		isc_json_kv_double(j, "percentage", it->cur, 2);
		isc_json_kv_double(j, "change_pp", it->cur - it->base, 2);
		isc_json_kv_double(j, "budget_pp", it->budget.pp, 3);
		isc_json_kv_string(j, "limits", it->budget.dir > 0 ? "rise" : "fall");
	}
	isc_json_end_object(j);
}

static void diff(struct isc_json *j, const struct isc_diff *d)
{
	isc_json_key(j, "diff");
	isc_json_begin_object(j);
	isc_json_kv_double(j, "threshold_percent", d->threshold_pct, 3);
	for (int c = 0; c < ISC_DIFF__COUNT; c++) {
		isc_json_kv_uint(j, isc_diff_change_name(c), d->by_change[c]);
	}
	isc_json_key(j, "ops");
	isc_json_begin_array(j);
	for (size_t i = 0; i < d->n && d->rows[i].change != ISC_DIFF_UNCHANGED; i++) {
		const struct isc_diff_row *r = &d->rows[i];
		isc_json_begin_object(j);
		isc_json_kv_string(j, "change", isc_diff_change_name(r->change));
		isc_json_kv_string(j, "group", isc_stat_group_name(r->group));
		isc_json_kv_string(j, "name", r->name);
		isc_json_kv_uint(j, "baseline_count", r->base_count);
		isc_json_kv_uint(j, "count", r->count);
		isc_json_kv_double(j, "baseline_total_us", r->base_total_us, 3);
		isc_json_kv_double(j, "total_us", r->total_us, 3);
		isc_json_end_object(j);
	}
	isc_json_end_array(j);
	isc_json_end_object(j);
}

void isc_json_gate(struct isc_json *j, const struct isc_gate_result *g)
{
	isc_json_key(j, "gate");
	isc_json_begin_object(j);
	isc_json_kv_bool(j, "passed", g->passed);
	isc_json_kv_uint(j, "failed", g->n_failed);
	isc_json_key(j, "baseline");
	if (g->base != NULL) {
		isc_json_string(j, g->base->label);
	} else {
		isc_json_null(j);
	}
	isc_json_key(j, "checks");
	isc_json_begin_array(j);
	for (size_t i = 0; i < g->n; i++) {
		item(j, &g->items[i]);
	}
	isc_json_end_array(j);
	if (g->has_diff) {
		diff(j, &g->diff);
	}
	isc_json_end_object(j);
}
