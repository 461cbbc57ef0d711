/* SPDX-License-Identifier: MIT */
/* The "Where the time goes" section of the markdown report (profile.h). */
#include <stdio.h>

#include "analyzer/base/fmt.h"
#include "analyzer/model/profile.h"
#include "analyzer/report/report.h"

static void fn_cell(FILE *f, const struct isc_trace *t, const struct isc_prof_fn *r)
{
	struct isc_frame fr = isc_frame_of_key(r->function, r->where, r->kind, r->line);
	char buf[ISC_LINE];
	isc_frame_text(t, &fr, buf, sizeof(buf));
	isc_md_cell(f, buf);
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static int64_t steady(const struct isc_profile *p)
{
	int64_t s = 0;
	for (int c = 0; c < ISC_PC_STEADY; c++) {
		s += p->cat[c];
	}
	return s;
}

/* With gpu, the last three columns split self time by what the GPU did. */
static void functions(FILE *f, const struct isc_trace *t, const struct isc_profile *p, int top,
		      bool gpu)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	int64_t all = steady(p);
	fprintf(f,
		"| function | self | self %% | total | total %% |%s\n|---|---:|---:|---:|---:|%s\n",
		gpu ? " cpu_preprocessing | framework_overhead | gpu_compute |" : "",
		gpu ? "---:|---:|---:|" : "");
	int shown = 0;
	for (size_t i = 0; i < p->n_fn && shown < top; i++) {
		const struct isc_prof_fn *r = &p->fn[i];
		if (r->total_steady == 0) {
			continue; /* start-up only */
		}
		shown++;
		fprintf(f, "| ");
		fn_cell(f, t, r);
		fprintf(f, " | %s | %.1f %% | %s | %.1f %% |",
			isc_fmt_dur(b1, (double)r->self_steady), pct(r->self_steady, all),
			isc_fmt_dur(b2, (double)r->total_steady), pct(r->total_steady, all));
		if (gpu) {
			fprintf(f, " %.1f %% | %.1f %% | %.1f %% |",
				pct(r->self[ISC_PC_GPU_IDLE], all), pct(r->self[ISC_PC_CUDA], all),
				pct(r->self[ISC_PC_BESIDE], all));
		}
		fputc('\n', f);
	}
	fputc('\n', f);
}

static void libraries(FILE *f, const struct isc_trace *t, const struct isc_profile *p, int top)
{
	char b[ISC_FMT_LEN];
	int64_t all = steady(p);
	fprintf(f, "| library or file | self | share |\n|---|---:|---:|\n");
	for (size_t i = 0; i < p->n_mod && (int)i < top && p->mod[i].self > 0; i++) {
		fprintf(f, "| ");
		isc_md_cell(f, p->mod[i].module ? isc_trace_str(t, p->mod[i].module) : "(unknown)");
		fprintf(f, " | %s | %.1f %% |\n", isc_fmt_dur(b, (double)p->mod[i].self),
			pct(p->mod[i].self, all));
	}
	fputc('\n', f);
}

static void threads(FILE *f, const struct isc_trace *t, const struct isc_profile *p)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	fprintf(f, "| pid | thread | steady | start-up | hottest function | worker |\n"
		   "|---:|---|---:|---:|---|---|\n");
	for (size_t i = 0; i < p->n_thr; i++) {
		const struct isc_prof_thread *th = &p->thr[i];
		if (th->steady + th->startup == 0) {
			continue;
		}
		const struct isc_thread_info *ti = &t->threads[th->thread];
		const char *name = isc_trace_str(t, ti->name);
		fprintf(f, "| %lld | %lld ", (long long)t->inputs[ti->input].pid,
			(long long)ti->tid);
		if (*name) {
			isc_md_cell(f, name);
		}
		fprintf(f, " | %s | %s | ", isc_fmt_dur(b1, (double)th->steady),
			isc_fmt_dur(b2, (double)th->startup));
		if (th->top_fn >= 0) {
			fn_cell(f, t, &p->fn[th->top_fn]);
		}
		fprintf(f, " | %s |\n", th->worker ? "yes" : "");
	}
	fputc('\n', f);
}

void isc_md_profile(FILE *f, const struct isc_trace *t, const struct isc_analysis *a, int top)
{
	const struct isc_profile *p = a->prof;
	if (p == NULL) {
		return;
	}
	char b[4][ISC_FMT_LEN];
	int64_t all = steady(p);
	bool gpu = isc_has_gpu_work(a);
	fprintf(f, "## Where the time goes (CPU samples)\n\n");
	if (!gpu) {
		fprintf(f,
			"%llu samples, %s of CPU time: start-up %s (%.1f %%), steady state %s.\n\n",
			(unsigned long long)p->samples, isc_fmt_dur(b[0], (double)p->total),
			isc_fmt_dur(b[1], (double)p->cat[ISC_PC_STARTUP]),
			pct(p->cat[ISC_PC_STARTUP], p->total), isc_fmt_dur(b[2], (double)all));
	} else {
		fprintf(f,
			"%llu samples, %s of CPU time: start-up %s (%.1f %%), steady state %s: "
			"host "
			"computing with the GPU idle (cpu_preprocessing) %.1f %%, inside CUDA "
			"calls "
			"(framework_overhead) %.1f %%, beside GPU work (gpu_compute) %.1f %%.\n\n",
			(unsigned long long)p->samples, isc_fmt_dur(b[0], (double)p->total),
			isc_fmt_dur(b[1], (double)p->cat[ISC_PC_STARTUP]),
			pct(p->cat[ISC_PC_STARTUP], p->total), isc_fmt_dur(b[2], (double)all),
			pct(p->cat[ISC_PC_GPU_IDLE], all), pct(p->cat[ISC_PC_CUDA], all),
			pct(p->cat[ISC_PC_BESIDE], all));
	}
	if (p->worker_threads > 0) {
		fprintf(f, "Data-loading workers: %s.\n\n", p->workers_how);
	}
	fprintf(f, "### Functions, steady state (self and total CPU time%s)\n\n",
		gpu ? "; the last three columns split self time by what the GPU did" : "");
	functions(f, t, p, top, gpu);
	fprintf(f, "### Libraries and files (self time, steady state)\n\n");
	libraries(f, t, p, top);
	fprintf(f, "### Processes and threads\n\n");
	threads(f, t, p);
}
