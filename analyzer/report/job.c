/* SPDX-License-Identifier: MIT */
/*
 * A job's results (analysis/job.h): the rank summary as the -f json result of one trace
 * carries it ("rank_summary"), the job report in markdown and JSON, and the reading of
 * both back for --merge. The summary is written and read in this one file so that the two
 * cannot drift: every number is an integer (nanoseconds) or a double with the decimals
 * the summary was rounded to, so a merged job equals the job analysed from its traces.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "analyzer/analysis/job.h"
#include "analyzer/base/fmt.h"
#include "analyzer/report/report.h"
#include "format/json-writer.h"

/* A per-host result of thousands of ranks stays far below this. */
#define RESULT_MAX_BYTES (1024u << 20)

static void rank_sum_json(struct isc_json *j, const struct isc_rank_sum *s)
{
	const struct isc_rank *r = &s->r;
	isc_json_begin_object(j);
	isc_json_kv_int(j, "rank", s->given_rank);
	isc_json_kv_string(j, "source", s->source);
	isc_json_kv_string(j, "hostname", s->host);
	isc_json_kv_int(j, "pid", s->pid);
	isc_json_kv_uint(j, "events", s->events);
	isc_json_kv_bool(j, "has_anchor", s->has_anchor);
	isc_json_kv_int(j, "anchor_monotonic_ns", s->anchor_mono_ns);
	isc_json_kv_int(j, "anchor_realtime_ns", s->anchor_real_ns);
	isc_json_kv_int(j, "start_ns", r->start);
	isc_json_kv_int(j, "end_ns", r->end);
	isc_json_key(j, "breakdown_ns");
	isc_json_begin_object(j);
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		isc_json_kv_int(j, isc_category_name((enum isc_category)c), r->cat_ns[c]);
	}
	isc_json_end_object(j);
	isc_json_kv_string(j, "bottleneck", isc_bound_name(r->bound));
	isc_json_kv_string(j, "cause", r->cause);
	isc_json_kv_double(j, "confidence", r->confidence, 3);
	isc_json_kv_uint(j, "steps", r->steps);
	isc_json_kv_int(j, "step_mean_ns", (int64_t)r->step_mean_ns);
	isc_json_kv_int(j, "comm_ns", r->comm_ns);
	isc_json_kv_int(j, "compute_ns", r->compute_ns);
	isc_json_kv_int(j, "overlap_ns", r->overlap_ns);
	/* [start_ns, end_ns, name hash] per collective, the first ISC_JOB_COLLS by end */
	isc_json_key(j, "collectives");
	bool pretty = j->pretty;
	j->pretty = false;
	isc_json_begin_array(j);
	for (size_t k = 0; k < s->n_colls; k++) {
		isc_json_begin_array(j);
		isc_json_int(j, s->colls[k].start);
		isc_json_int(j, s->colls[k].end);
		isc_json_uint(j, s->colls[k].name);
		isc_json_end_array(j);
	}
	isc_json_end_array(j);
	j->pretty = pretty;
	isc_json_end_object(j);
}

int isc_json_rank_summary(struct isc_json *j, const struct isc_trace *t,
			  const struct isc_analysis *a)
{
	if (t->n_inputs != 1) {
		return 0; /* several inputs are no one rank: their job is the union's */
	}
	struct isc_rank_sum s;
	int rc = isc_rank_sum_from(t, a, t->inputs[0].path, &s);
	if (rc == 0) {
		isc_json_key(j, "rank_summary");
		rank_sum_json(j, &s);
		isc_rank_sum_free(&s);
	}
	return rc;
}

static void us3(struct isc_json *j, const char *key, double ns)
{
	isc_json_kv_double(j, key, ns / 1000.0, 3);
}

int isc_job_write_json(FILE *f, const struct isc_job *job, const char *version)
{
	char buf[16384];
	struct isc_json j;
	isc_json_init(&j, buf, sizeof(buf), isc_json_sink_file, f);
	j.pretty = true;
	isc_json_begin_object(&j);
	isc_json_kv_string(&j, "job_version", "1.0");
	isc_json_key(&j, "generator");
	isc_json_begin_object(&j);
	isc_json_kv_string(&j, "name", "inferscope-analyze");
	isc_json_kv_string(&j, "version", version);
	isc_json_end_object(&j);
	isc_json_kv_uint(&j, "ranks_analysed", job->n);
	isc_json_kv_uint(&j, "inputs_failed", job->n_failed);
	isc_json_kv_uint(&j, "traces_held_at_once", job->held_at_once);
	const struct isc_rank_sum *v = job->verdict >= 0 ? &job->v[job->verdict] : NULL;
	const struct isc_rank_sum *sl = job->slowest >= 0 ? &job->v[job->slowest] : NULL;
	isc_json_key(&j, "bottleneck");
	isc_json_begin_object(&j);
	isc_json_kv_string(&j, "type", isc_bound_name(v ? v->r.bound : ISC_BOUND_UNKNOWN));
	isc_json_kv_string(&j, "cause", v ? v->r.cause : "no_data");
	isc_json_kv_double(&j, "confidence", v ? v->r.confidence : 0, 3);
	isc_json_key(&j, "rank");
	if (v != NULL) {
		isc_json_int(&j, v->r.rank);
	} else {
		isc_json_null(&j);
	}
	isc_json_kv_string(&j, "whose", job->straggler >= 0 ? "straggler" : "slowest");
	isc_json_end_object(&j);
	isc_json_kv_string(&j, "slowest_why", sl ? job->slowest_why : "");
	isc_json_key(&j, "slowest_rank");
	if (sl != NULL) {
		isc_json_int(&j, sl->r.rank);
	} else {
		isc_json_null(&j);
	}
	isc_json_key(&j, "straggler");
	isc_json_begin_object(&j);
	isc_json_key(&j, "rank");
	if (job->straggler >= 0) {
		isc_json_int(&j, job->v[job->straggler].r.rank);
	} else {
		isc_json_null(&j);
	}
	isc_json_kv_uint(&j, "collectives_compared", job->compared);
	isc_json_kv_uint(&j, "arrived_last", job->straggler_last);
	us3(&j, "mean_delay_us", job->straggler >= 0 ? job->straggler_late_ns : 0);
	us3(&j, "median_skew_us", job->skew_ns);
	isc_json_end_object(&j);
	isc_json_key(&j, "breakdown_spread");
	isc_json_begin_array(&j);
	for (int c = 0; c < ISC_CAT__COUNT && job->n > 0; c++) {
		const struct isc_job_spread *sp = &job->spread[c];
		isc_json_begin_object(&j);
		isc_json_kv_string(&j, "category", isc_category_name((enum isc_category)c));
		isc_json_kv_double(&j, "min_pct", sp->min * 100, 2);
		isc_json_kv_double(&j, "median_pct", sp->median * 100, 2);
		isc_json_kv_double(&j, "max_pct", sp->max * 100, 2);
		isc_json_kv_int(&j, "max_rank", sp->max_rank);
		isc_json_end_object(&j);
	}
	isc_json_end_array(&j);
	isc_json_key(&j, "hosts");
	isc_json_begin_array(&j);
	for (size_t i = 0; i < job->n_hosts; i++) {
		const struct isc_job_host *h = &job->hosts[i];
		isc_json_begin_object(&j);
		isc_json_kv_string(&j, "hostname", h->name);
		isc_json_kv_uint(&j, "ranks", h->ranks);
		isc_json_kv_bool(&j, "reference", h->reference);
		us3(&j, "anchor_shift_us", (double)h->anchor_shift_ns);
		us3(&j, "offset_us", (double)h->offset_ns);
		us3(&j, "uncertainty_us", (double)h->uncertainty_ns);
		isc_json_kv_uint(&j, "collectives_matched", h->matched);
		us3(&j, "applied_shift_us", (double)h->applied_ns);
		isc_json_end_object(&j);
	}
	isc_json_end_array(&j);
	isc_json_key(&j, "ranks");
	isc_json_begin_array(&j);
	for (size_t i = 0; i < job->n; i++) {
		rank_sum_json(&j, &job->v[i]);
	}
	isc_json_end_array(&j);
	isc_json_key(&j, "failed");
	isc_json_begin_array(&j);
	for (size_t i = 0; i < job->n_failed; i++) {
		isc_json_begin_object(&j);
		isc_json_kv_string(&j, "source", job->failed[i].source);
		isc_json_kv_string(&j, "why", job->failed[i].why);
		isc_json_end_object(&j);
	}
	isc_json_end_array(&j);
	isc_json_end_object(&j);
	isc_json_raw(&j, "\n", 1);
	return isc_json_flush(&j) < 0 || ferror(f) ? -EIO : 0;
}

static const char *rank_label(char b[ISC_FMT_LEN], const struct isc_rank_sum *s)
{
	snprintf(b, ISC_FMT_LEN, "%d", s->r.rank);
	return b;
}

static void md_ranks(FILE *f, const struct isc_job *job)
{
	char b[6][ISC_FMT_LEN];
	fprintf(f, "## Ranks\n\nEach rank analysed alone, on its own timeline; the pace is the "
		   "mean steady step when every rank has steps, else the window.\n\n"
		   "| rank | host | input | verdict | window | step mean | start offset |");
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		fprintf(f, " %s |", isc_category_name((enum isc_category)c));
	}
	fprintf(f, " comm | comm hidden |\n|---|---|---|---|---|---|---|");
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		fprintf(f, "---|");
	}
	fprintf(f, "---|---|\n");
	for (size_t i = 0; i < job->n; i++) {
		const struct isc_rank_sum *s = &job->v[i];
		const struct isc_rank *r = &s->r;
		int64_t total = 0;
		for (int c = 0; c < ISC_CAT__COUNT; c++) {
			total += r->cat_ns[c];
		}
		fprintf(f, "| %s | ", rank_label(b[0], s));
		isc_md_cell(f, s->host[0] ? s->host : "-");
		fprintf(f, " | ");
		isc_md_cell(f, s->source);
		fprintf(f, " | %s/%s | %s | %s | %s |", isc_bound_name(r->bound), r->cause,
			isc_fmt_dur(b[1], (double)(r->end - r->start)),
			r->steps > 0 ? isc_fmt_dur(b[2], r->step_mean_ns) : "-",
			isc_fmt_dur(b[3], (double)r->offset));
		for (int c = 0; c < ISC_CAT__COUNT; c++) {
			fprintf(f, " %s |",
				isc_fmt_pct(b[4],
					    total > 0 ? (double)r->cat_ns[c] / (double)total : 0));
		}
		fprintf(f, " %s | %s |\n", isc_fmt_dur(b[4], (double)r->comm_ns),
			r->comm_ns > 0
				? isc_fmt_pct(b[5], (double)r->overlap_ns / (double)r->comm_ns)
				: "-");
	}
	fprintf(f, "\n");
}

static void md_hosts(FILE *f, const struct isc_job *job)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN], b4[ISC_FMT_LEN];
	bool several = job->n_hosts >= 2;
	for (size_t i = 0; i < job->n_hosts; i++) {
		const struct isc_job_host *h = &job->hosts[i];
		const char *name = h->name[0] ? h->name : "unnamed";
		if (!several || h->reference) {
			fprintf(f, "- clock: host %s: %s (%u rank(s))\n", name,
				several ? "the reference clock" : "one clock", h->ranks);
		} else if (h->estimated) {
			fprintf(f,
				"- clock: host %s: %s%s; collectives: a further %s +/- %s (%u NCCL "
				"kernel ends matched); shifted by %s (%u rank(s))\n",
				name,
				h->anchored ? "realtime anchors shift it by " : "no anchor pair",
				h->anchored ? isc_fmt_dur(b1, (double)h->anchor_shift_ns) : "",
				isc_fmt_dur(b2, (double)h->offset_ns),
				isc_fmt_dur(b3, (double)h->uncertainty_ns), h->matched,
				isc_fmt_dur(b4, (double)h->applied_ns), h->ranks);
		} else {
			fprintf(f, "- clock: host %s: %s%s; no collectives to match (%u rank(s))\n",
				name,
				h->anchored ? "realtime anchors shift it by " : "no anchor pair",
				h->anchored ? isc_fmt_dur(b1, (double)h->anchor_shift_ns) : "",
				h->ranks);
		}
	}
}

int isc_job_write_md(FILE *f, const struct isc_job *job, const char *version)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN], b3[ISC_FMT_LEN];
	fprintf(f, "# InferScope job report\n\n");
	fprintf(f,
		"%zu rank(s) analysed, %zu input(s) not analysed, %zu host(s); at most %zu "
		"trace(s) held at once. inferscope-analyze %s.\n\n",
		job->n, job->n_failed, job->n_hosts, job->held_at_once, version);
	const struct isc_rank_sum *v = job->verdict >= 0 ? &job->v[job->verdict] : NULL;
	const struct isc_rank_sum *sl = job->slowest >= 0 ? &job->v[job->slowest] : NULL;
	if (v != NULL) {
		fprintf(f, "**Verdict: %s** (%s, confidence %.2f): the %s's (rank %d).\n\n",
			isc_bound_name(v->r.bound), v->r.cause, v->r.confidence,
			job->straggler >= 0 ? "straggler" : "slowest rank", v->r.rank);
	} else {
		fprintf(f, "**Verdict: unknown**: fewer than two ranks analysed.\n\n");
	}
	fprintf(f, "## Job\n\n");
	if (sl != NULL) {
		fprintf(f, "- slowest: %s\n", job->slowest_why);
	}
	if (job->straggler >= 0) {
		fprintf(f,
			"- straggler: rank %d arrives at the collectives %s after the first rank "
			"on average, last at %u of %u collectives seen on two or more ranks; "
			"median "
			"skew between the first and the last arrival %s\n",
			job->v[job->straggler].r.rank, isc_fmt_dur(b1, job->straggler_late_ns),
			job->straggler_last, job->compared, isc_fmt_dur(b2, job->skew_ns));
	} else {
		fprintf(f, "- straggler: no collective (NCCL kernel) seen on two ranks\n");
	}
	md_hosts(f, job);
	fprintf(f, "\n## Breakdown across ranks\n\nShare of each rank's window.\n\n"
		   "| category | min | median | max | max at rank |\n|---|---|---|---|---|\n");
	for (int c = 0; c < ISC_CAT__COUNT && job->n > 0; c++) {
		const struct isc_job_spread *sp = &job->spread[c];
		fprintf(f, "| %s | %s | %s | %s | %d |\n", isc_category_name((enum isc_category)c),
			isc_fmt_pct(b1, sp->min), isc_fmt_pct(b2, sp->median),
			isc_fmt_pct(b3, sp->max), sp->max_rank);
	}
	fprintf(f, "\n");
	md_ranks(f, job);
	if (job->n_failed > 0) {
		fprintf(f, "## Inputs not analysed\n\n");
		for (size_t i = 0; i < job->n_failed; i++) {
			fprintf(f, "- ");
			isc_md_cell(f, job->failed[i].source);
			fprintf(f, ": ");
			isc_md_cell(f, job->failed[i].why);
			fprintf(f, "\n");
		}
		fprintf(f, "\n");
	}
	return ferror(f) ? -EIO : 0;
}

/* Reading back. */

static yajl_val get(yajl_val v, const char *key)
{
	const char *path[2] = { key, NULL };
	return yajl_tree_get(v, path, yajl_t_any);
}

static int64_t i64(yajl_val v)
{
	return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

static void str(char *dst, size_t n, yajl_val v)
{
	snprintf(dst, n, "%s", YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "");
}

static int parse_rank(yajl_val o, struct isc_rank_sum *s, const char *label, struct isc_diag *d)
{
	memset(s, 0, sizeof(*s));
	yajl_val bd = get(o, "breakdown_ns"), colls = get(o, "collectives");
	if (!YAJL_IS_OBJECT(o) || !YAJL_IS_INTEGER(get(o, "start_ns")) || !YAJL_IS_OBJECT(bd) ||
	    !YAJL_IS_ARRAY(colls)) {
		isc_diag_set(d, "%s: a rank summary lacks start_ns, breakdown_ns or collectives",
			     label);
		return -EINVAL;
	}
	struct isc_rank *r = &s->r;
	s->given_rank = r->rank = (int)i64(get(o, "rank"));
	str(s->source, sizeof(s->source), get(o, "source"));
	str(s->host, sizeof(s->host), get(o, "hostname"));
	s->pid = i64(get(o, "pid"));
	s->events = (uint64_t)i64(get(o, "events"));
	s->has_anchor = YAJL_IS_TRUE(get(o, "has_anchor"));
	s->anchor_mono_ns = i64(get(o, "anchor_monotonic_ns"));
	s->anchor_real_ns = i64(get(o, "anchor_realtime_ns"));
	r->start = i64(get(o, "start_ns"));
	r->end = i64(get(o, "end_ns"));
	for (int c = 0; c < ISC_CAT__COUNT; c++) {
		r->cat_ns[c] = i64(get(bd, isc_category_name((enum isc_category)c)));
	}
	const char *b =
		YAJL_IS_STRING(get(o, "bottleneck")) ? YAJL_GET_STRING(get(o, "bottleneck")) : "";
	for (int k = ISC_BOUND_UNKNOWN; k < ISC_BOUND__COUNT; k++) {
		if (b != NULL && strcmp(b, isc_bound_name(k)) == 0) {
			r->bound = (enum isc_bound)k;
		}
	}
	str(r->cause, sizeof(r->cause), get(o, "cause"));
	yajl_val conf = get(o, "confidence");
	r->confidence = YAJL_IS_NUMBER(conf) ? YAJL_GET_DOUBLE(conf) : 0;
	r->steps = (uint64_t)i64(get(o, "steps"));
	r->step_mean_ns = (double)i64(get(o, "step_mean_ns"));
	r->comm_ns = i64(get(o, "comm_ns"));
	r->compute_ns = i64(get(o, "compute_ns"));
	r->overlap_ns = i64(get(o, "overlap_ns"));
	size_t n = colls->u.array.len < ISC_JOB_COLLS ? colls->u.array.len : ISC_JOB_COLLS;
	s->colls = n > 0 ? malloc(n * sizeof(*s->colls)) : NULL;
	if (n > 0 && s->colls == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		yajl_val c = colls->u.array.values[k];
		if (!YAJL_IS_ARRAY(c) || c->u.array.len != 3) {
			isc_diag_set(d, "%s: a collective is not [start_ns, end_ns, name]", label);
			isc_rank_sum_free(s);
			return -EINVAL;
		}
		s->colls[s->n_colls++] =
			(struct isc_job_coll){ i64(c->u.array.values[0]), i64(c->u.array.values[1]),
					       (uint32_t)i64(c->u.array.values[2]) };
	}
	return 0;
}

static int add_parsed(struct isc_job *job, yajl_val o, const char *label, struct isc_diag *d)
{
	struct isc_rank_sum s;
	int rc = parse_rank(o, &s, label, d);
	rc = rc == 0 ? isc_job_add(job, &s) : rc;
	isc_rank_sum_free(&s);
	return rc;
}

/* A job result's ranks and failures, or one trace's rank summary. */
static int from_tree(struct isc_job *job, yajl_val root, const char *label, struct isc_diag *d)
{
	yajl_val one = get(root, "rank_summary"), ranks = get(root, "ranks");
	int rc = 0;
	if (YAJL_IS_STRING(get(root, "job_version")) && YAJL_IS_ARRAY(ranks)) {
		for (size_t i = 0; i < ranks->u.array.len && rc == 0; i++) {
			rc = add_parsed(job, ranks->u.array.values[i], label, d);
		}
		yajl_val failed = get(root, "failed");
		for (size_t i = 0; YAJL_IS_ARRAY(failed) && i < failed->u.array.len && rc == 0;
		     i++) {
			yajl_val fo = failed->u.array.values[i];
			yajl_val src = get(fo, "source"), why = get(fo, "why");
			rc = isc_job_add_failed(job,
						YAJL_IS_STRING(src) ? YAJL_GET_STRING(src) : "?",
						YAJL_IS_STRING(why) ? YAJL_GET_STRING(why) : "?");
		}
		size_t held = (size_t)i64(get(root, "traces_held_at_once"));
		job->held_at_once = held > job->held_at_once ? held : job->held_at_once;
		return rc;
	}
	if (YAJL_IS_OBJECT(one)) {
		job->held_at_once = job->held_at_once > 1 ? job->held_at_once : 1;
		return add_parsed(job, one, label, d);
	}
	isc_diag_set(d,
		     "%s: neither a job result nor the -f json result of one trace (no "
		     "rank_summary: a result of several inputs, or of an older analyzer)",
		     label);
	return -EINVAL;
}

int isc_job_merge_file(struct isc_job *job, const char *path, struct isc_diag *d)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		isc_diag_set(d, "%s: %s", path, strerror(errno));
		return -EINVAL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	int rc = buf == NULL ? -ENOMEM : 0;
	while (rc == 0) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap) {
			break;
		}
		char *nb = cap < RESULT_MAX_BYTES ? realloc(buf, cap * 2 + 1) : NULL;
		if (nb == NULL) {
			isc_diag_set(d, "%s: larger than %u MiB", path, RESULT_MAX_BYTES >> 20);
			rc = -EINVAL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (rc == 0 && ferror(f)) {
		isc_diag_set(d, "%s: read error", path);
		rc = -EINVAL;
	}
	fclose(f);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	char err[256] = "";
	yajl_val root = yajl_tree_parse(buf, err, sizeof(err));
	free(buf);
	if (root == NULL) {
		char *nl = strchr(err, '\n');
		if (nl != NULL) {
			*nl = '\0';
		}
		isc_diag_set(d, "%s: not valid JSON: %s", path, err[0] ? err : "parse error");
		return -EINVAL;
	}
	rc = from_tree(job, root, path, d);
	yajl_tree_free(root);
	return rc;
}
