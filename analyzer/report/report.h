/* SPDX-License-Identifier: MIT */
/*
 * Writers turn an analysis into a document on a FILE *. They are deterministic (the same
 * trace gives the same bytes) and registered by name in one table.
 */
#ifndef ISC_REPORT_H
#define ISC_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzer/model/result.h"
#include "analyzer/report/markup.h"

struct isc_gate_result;
struct isc_json;

struct isc_report_opts {
	int top;			    /* rows per statistics table */
	const char *version;		    /* analyzer version written into the output */
	const struct isc_gate_result *gate; /* NULL when no gate ran */
};

struct isc_writer {
	const char *name;
	const char *what;
	/* Returns 0, or -EIO when the stream failed. */
	int (*write)(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		     const struct isc_report_opts *o);
};

const struct isc_writer *isc_writer_find(const char *name);
const struct isc_writer *const *isc_writers(size_t *n);

int isc_report_md(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		  const struct isc_report_opts *o);
int isc_report_json(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		    const struct isc_report_opts *o);
int isc_report_html(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		    const struct isc_report_opts *o);
int isc_export_chrome(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		      const struct isc_report_opts *o);
/* The export's "samples" and "stackFrames" members: the CPU samples with their stacks.
 * Returns 0 or -ENOMEM. */
struct isc_json;
int isc_chrome_samples(struct isc_json *j, const struct isc_trace *t);
/* CPU samples as folded stacks (flamegraph.pl, speedscope) and as pprof's profile.proto. */
int isc_export_folded(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		      const struct isc_report_opts *o);
int isc_export_pprof(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		     const struct isc_report_opts *o);
/* The gate alone (they need o->gate): markdown for a pull-request comment, JUnit XML. */
int isc_report_gate_md(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		       const struct isc_report_opts *o);
int isc_report_junit(FILE *f, const struct isc_trace *t, const struct isc_analysis *a,
		     const struct isc_report_opts *o);
/* job.c (analysis/job.h): one trace's rank summary as a member of its JSON result (none
 * for several inputs; 0 or -ENOMEM), the job report in markdown and JSON (0 or -EIO), and
 * a job result or one trace's JSON result read back into job (--merge; 0, -EINVAL with d
 * set, or -ENOMEM). */
struct isc_job;
struct isc_diag;
int isc_json_rank_summary(struct isc_json *j, const struct isc_trace *t,
			  const struct isc_analysis *a);
int isc_job_write_md(FILE *f, const struct isc_job *job, const char *version);
int isc_job_write_json(FILE *f, const struct isc_job *job, const char *version);
int isc_job_merge_file(struct isc_job *job, const char *path, struct isc_diag *d);

/* True for writers that only have something to say when a gate ran. */
bool isc_writer_needs_gate(const struct isc_writer *w);

/* The gate as a markdown section: "## Gate" in the report, a whole comment when
 * standalone. */
void isc_md_gate(FILE *f, const struct isc_gate_result *g, int top, bool standalone);
/* The "gate" member of the JSON result. */
void isc_json_gate(struct isc_json *j, const struct isc_gate_result *g);

/* The "Where the time goes" section (nothing without CPU samples). */
void isc_md_profile(FILE *f, const struct isc_trace *t, const struct isc_analysis *a, int top);
/* The HTML report's flame graph of the CPU samples (nothing without them). */
int isc_html_flame(FILE *f, const struct isc_trace *t, const struct isc_analysis *a);
/* The "cpu_profile" member of the JSON result (nothing without CPU samples). */
void isc_json_profile(struct isc_json *j, const struct isc_trace *t, const struct isc_analysis *a,
		      int top);

#endif /* ISC_REPORT_H */
