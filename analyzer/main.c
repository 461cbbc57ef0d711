/* SPDX-License-Identifier: MIT */
/*
 * inferscope-analyze: parses options and wires the stages (read, finalize, analyze,
 * gate, write). Nothing else lives here. Exit codes: 0 success, 1 the gate failed, 2 usage,
 * 3 unreadable or invalid input (the baseline too), 4 an output could not be written.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/analysis/job.h"
#include "analyzer/gate/gate.h"
#include "analyzer/causal/graph.h"
#include "isc-config.h"
#include "analyzer/base/par.h"
#include "analyzer/base/fmt.h"
#include "analyzer/base/grow.h"
#include "analyzer/base/json-number.h"
#include "analyzer/readers/descendants.h"
#include "analyzer/readers/reader.h"
#include "analyzer/report/report.h"
#include "analyzer/rules/rules.h"

enum { EXIT_GATE = 1, EXIT_USAGE = 2, EXIT_INPUT = 3, EXIT_OUTPUT = 4 };

struct cli {
	const char *format;
	const char *output;
	const char *input_format;
	const char *thresholds;
	bool validate;
	unsigned threads; /* --threads, 0: one per online CPU */
	size_t split;	  /* --parse-split */
	struct isc_analyze_opts ao;
	int top;
	char **inputs;
	int n_inputs;
	struct isc_gate_spec gate;
	const char *junit;
	const char *gate_summary;
	const char *what_if[16];
	size_t n_what_if;
	bool merge;
	int jobs; /* traces a job analyses at once; 0: by cores and --max-memory */
	size_t max_memory;
};

/* What a gate run holds until the outputs are written. */
struct gate_run {
	struct isc_snapshot *cur, *base;
	struct isc_gate_result *result;
};

enum {
	OPT_VALIDATE = 256,
	OPT_WINDOW_SCOPE,
	OPT_WINDOW,
	OPT_THRESHOLDS,
	OPT_TOP,
	OPT_INPUT_FORMAT,
	OPT_LIST_RULES,
	OPT_LIST_THRESHOLDS,
	OPT_LIST_FORMATS,
	OPT_WHAT_IF,
	OPT_CHECK,
	OPT_BASELINE,
	OPT_MAX_REGRESSION,
	OPT_DIFF_THRESHOLD,
	OPT_JUNIT,
	OPT_GATE_SUMMARY,
	OPT_MAX_MEMORY,
	OPT_MERGE,
	OPT_JOBS,
	OPT_THREADS,
	OPT_PARSE_SPLIT,
};

static const struct option options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },
	{ "validate", no_argument, NULL, OPT_VALIDATE },
	{ "window-scope", required_argument, NULL, OPT_WINDOW_SCOPE },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "thresholds", required_argument, NULL, OPT_THRESHOLDS },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "input-format", required_argument, NULL, OPT_INPUT_FORMAT },
	{ "list-rules", no_argument, NULL, OPT_LIST_RULES },
	{ "list-thresholds", no_argument, NULL, OPT_LIST_THRESHOLDS },
	{ "list-formats", no_argument, NULL, OPT_LIST_FORMATS },
	{ "what-if", required_argument, NULL, OPT_WHAT_IF },
	{ "check", required_argument, NULL, OPT_CHECK },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "max-regression", required_argument, NULL, OPT_MAX_REGRESSION },
	{ "diff-threshold", required_argument, NULL, OPT_DIFF_THRESHOLD },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "gate-summary", required_argument, NULL, OPT_GATE_SUMMARY },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "merge", no_argument, NULL, OPT_MERGE },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "parse-split", required_argument, NULL, OPT_PARSE_SPLIT },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: inferscope-analyze [OPTIONS] TRACE...\n"
		"Reads InferScope, Kineto/Chrome (gzip'd or not) and prototype traces; several\n"
		"traces of one host (parent and children) are merged on their shared clock;\n"
		"the segments of one process (BASE.PID.seg-N.spill[.part], continuous mode)\n"
		"given together are read as one trace, in segment order.\n"
		"Several inputs that are each one rank (Kineto distributedInfo.rank, or GPU\n"
		"work of its own) are a job: read and analysed one at a time (one trace in\n"
		"memory), reported per rank and job-wide (slowest rank, straggler, spread of\n"
		"each share; -f md or json); with another format or a gate, or when an input is\n"
		"not a rank, all inputs are read together and the verdict is the slowest rank's.\n"
		"Steps (ProfilerStep#N, or a repeating scope) get per-step distributions and the\n"
		"start-up before them is reported apart.\n\n"
		"  -f, --format NAME        md (default), json, html, chrome, folded, pprof,\n"
		"                           gate-md or junit\n"
		"  -o, --output FILE        write there instead of standard output\n"
		"      --validate           check each TRACE against the InferScope format\n"
		"      --merge              the inputs are -f json results (of one trace each, or\n"
		"                           of jobs): report the job they make up\n"
		"      --jobs N             a job's traces analysed at once (default: 2 on two\n"
		"                           cores or more, 1 when two would pass --max-memory)\n"
		"      --window-scope NAME  trim the window to scopes named NAME ('prefix*' too)\n"
		"      --window START:END   trim the window to these trace-clock microseconds\n"
		"      --thresholds FILE    override thresholds ('key = value' lines)\n"
		"      --top N              rows per statistics table (default 10)\n"
		"      --input-format NAME  inferscope, kineto, bare or spill, not detected\n"
		"      --what-if CHANGE     re-time the run's dependency graph with CHANGE and\n"
		"                           report the predicted change of the window "
		"(repeatable,\n"
		"                           16 at most): scope:NAME*F (with its CUDA calls and\n"
		"                           their GPU work), kernel:NAME*F, call:NAME*F\n"
		"                           (time x F; NAME may end in '*'), overlap:NAME (a "
		"scope\n"
		"                           run ahead on a worker; overlap:NAME*K on K of them),\n"
		"                           no-wait:NAME (waits in a\n"
		"                           scope or calls NAME return at once), gpu*F,\n"
		"                           copies*F, no-sync,\n"
		"                           async-copies, graph (launch calls cost nothing)\n"
		"      --list-rules         print the rule ids and exit\n"
		"      --list-thresholds    print the thresholds with their defaults and exit\n"
		"      --list-formats       print the input and output formats and exit\n"
		"      --max-memory SIZE    stop (exit 3) before the trace's data would take more\n"
		"                           than SIZE (e.g. 512M, 8G; default half the physical\n"
		"                           memory; 0: no bound)\n"
		"      --threads N          threads that read one InferScope or Kineto trace,\n"
		"                           run the analysis's stages and the verdict's\n"
		"                           what-ifs (gzip: inflated beside the parse)\n"
		"                           (default: one per online CPU; 1: all serial).\n"
		"                           The output is the same whatever N\n"
		"      --parse-split SIZE   bytes of events per part of a parallel read (default\n"
		"                           8M; small values test the split on small traces)\n\n"
		"Gate (exit 1 when a check or budget fails):\n"
		"      --check EXPR         NAME OP VALUE, e.g. 'gpu_compute>=60', 'idle<=15',\n"
		"                           'bottleneck!=cpu_bound', 'dropped_events==0',\n"
		"                           'kernel:gemm*.total_ms<=50' (repeatable, ANDed)\n"
		"      --baseline FILE      compare with an earlier -f json result (or a trace)\n"
		"      --max-regression PP  budget in percentage points for every category\n"
		"                           (default 5); CATEGORY=[+|-]PP or CATEGORY=off for one\n"
		"      --diff-threshold PCT total-time change that makes an op increased or\n"
		"                           decreased in the op diff (default 10)\n"
		"      --junit FILE         write the gate as JUnit XML\n"
		"      --gate-summary FILE  write the gate alone in markdown (a PR comment)\n\n"
		"  -h, --help               this text\n"
		"  -V, --version            the version\n\n"
		"Exit status: 0 success, 1 the gate failed, 2 usage error, 3 unreadable or\n"
		"invalid input (trace or baseline; a trace with no event of a known kind; a\n"
		"gate on a window with nothing to judge), 4 an output could not be written.\n");
}

static void print_rule(const struct isc_rule *r, void *ctx)
{
	fprintf(ctx, "%-28s %s\n", r->id, r->summary);
}

static void list_formats(void)
{
	size_t n;
	const struct isc_reader *const *rd = isc_readers(&n);
	printf("input formats:\n");
	for (size_t i = 0; i < n; i++) {
		printf("  %-12s %s\n", rd[i]->name, rd[i]->what);
	}
	const struct isc_writer *const *wr = isc_writers(&n);
	printf("output formats:\n");
	for (size_t i = 0; i < n; i++) {
		printf("  %-12s %s\n", wr[i]->name, wr[i]->what);
	}
}

static bool parse_window(const char *s, struct isc_analyze_opts *ao)
{
	const char *colon = strchr(s, ':');
	if (colon == NULL) {
		return false;
	}
	ao->window_explicit = true;
	return isc_num_us_to_ns(s, (size_t)(colon - s), &ao->window_start) &&
	       isc_num_us_to_ns(colon + 1, strlen(colon + 1), &ao->window_end);
}

static int parse_gate_option(struct cli *c, int opt, const char *arg)
{
	char err[512] = "";
	char *end = NULL;
	int r = 0;
	switch (opt) {
	case OPT_CHECK:
		r = isc_gate_add_check(&c->gate, arg, err, sizeof(err));
		break;
	case OPT_BASELINE:
		c->gate.baseline = arg;
		break;
	case OPT_MAX_REGRESSION:
		r = isc_gate_add_budget(&c->gate, arg, err, sizeof(err));
		break;
	case OPT_DIFF_THRESHOLD:
		c->gate.diff_threshold_pct = strtod(arg, &end);
		if (*arg == '\0' || *end != '\0' || !(c->gate.diff_threshold_pct >= 0) ||
		    c->gate.diff_threshold_pct > 1e9) {
			snprintf(err, sizeof(err),
				 "--diff-threshold: expected a percentage, got "
				 "'%s'",
				 arg);
			r = -EINVAL;
		}
		break;
	case OPT_JUNIT:
		c->junit = arg;
		break;
	case OPT_GATE_SUMMARY:
		c->gate_summary = arg;
		break;
	}
	if (r < 0) {
		fprintf(stderr, "inferscope-analyze: %s\n", r == -ENOMEM ? "out of memory" : err);
		return EXIT_USAGE;
	}
	return -1;
}

/* The analyzer's data would pass --max-memory (called from the thread that asked, before
 * it allocates): say so and stop at once, whatever the other thread is doing. */
static void over_memory(size_t want, size_t bound)
{
	char b1[ISC_FMT_LEN], b2[ISC_FMT_LEN];
	fprintf(stderr,
		"inferscope-analyze: the trace needs more memory than --max-memory allows "
		"(%s, bound %s): raise --max-memory or analyse a shorter capture\n",
		isc_fmt_bytes(b1, (double)want), isc_fmt_bytes(b2, (double)bound));
	_exit(EXIT_INPUT);
}

/* The default bound: half the physical memory, room for the rest of the machine. */
static size_t default_max_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? (size_t)pages / 2 * (size_t)size : 0;
}

/* Returns -1 to go on, or an exit status. */
static int parse_option(struct cli *c, int opt, const char *arg)
{
	char *end = NULL;
	if (opt >= OPT_CHECK && opt <= OPT_GATE_SUMMARY) {
		return parse_gate_option(c, opt, arg);
	}
	switch (opt) {
	case 'f':
		c->format = arg;
		return -1;
	case 'o':
		c->output = arg;
		return -1;
	case OPT_VALIDATE:
		c->validate = true;
		return -1;
	case OPT_MERGE:
		c->merge = true;
		return -1;
	case OPT_JOBS:
		c->jobs = (int)strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || c->jobs < 1 || c->jobs > 64) {
			fprintf(stderr, "inferscope-analyze: --jobs: expected 1 to 64, got '%s'\n",
				arg);
			return EXIT_USAGE;
		}
		return -1;
	case OPT_WINDOW_SCOPE:
		c->ao.window_scope = arg;
		return -1;
	case OPT_WINDOW:
		if (!parse_window(arg, &c->ao)) {
			fprintf(stderr,
				"inferscope-analyze: --window: expected START:END in "
				"microseconds, got '%s'\n",
				arg);
			return EXIT_USAGE;
		}
		return -1;
	case OPT_THRESHOLDS:
		c->thresholds = arg;
		return -1;
	case OPT_TOP:
		c->top = (int)strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || c->top < 1 || c->top > 100000) {
			fprintf(stderr, "inferscope-analyze: --top: expected a count, got '%s'\n",
				arg);
			return EXIT_USAGE;
		}
		return -1;
	case OPT_INPUT_FORMAT:
		c->input_format = arg;
		return -1;
	case OPT_MAX_MEMORY: {
		size_t bound;
		if (!isc_parse_bytes(arg, &bound)) {
			fprintf(stderr,
				"inferscope-analyze: --max-memory: expected a size, got '%s'\n",
				arg);
			return EXIT_USAGE;
		}
		isc_mem_bound(bound, over_memory);
		c->max_memory = bound;
		return -1;
	}
	case OPT_THREADS: {
		long n = strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || n < 1 || n > 256) {
			fprintf(stderr,
				"inferscope-analyze: --threads: expected a count from 1 to 256, "
				"got '%s'\n",
				arg);
			return EXIT_USAGE;
		}
		c->threads = (unsigned)n;
		isc_par_set_threads(c->threads); /* the pool's and the sorts' */
		return -1;
	}
	case OPT_PARSE_SPLIT:
		if (!isc_parse_bytes(arg, &c->split) || c->split == 0) {
			fprintf(stderr,
				"inferscope-analyze: --parse-split: expected a size, got '%s'\n",
				arg);
			return EXIT_USAGE;
		}
		return -1;
	case OPT_WHAT_IF: {
		struct isc_change ch;
		char pat[128], err[256];
		if (c->n_what_if == sizeof(c->what_if) / sizeof(c->what_if[0]) ||
		    isc_whatif_parse(arg, &ch, pat, sizeof(pat), err, sizeof(err)) < 0) {
			fprintf(stderr, "inferscope-analyze: %s\n",
				c->n_what_if < 16 ? err : "--what-if: 16 questions at most");
			return EXIT_USAGE;
		}
		c->what_if[c->n_what_if++] = arg;
		c->ao.what_if = c->what_if;
		c->ao.n_what_if = c->n_what_if;
		return -1;
	}
	case OPT_LIST_RULES:
		isc_rules_each(print_rule, stdout);
		return 0;
	case OPT_LIST_THRESHOLDS: {
		struct isc_thresholds th;
		isc_thresholds_init(&th);
		isc_thresholds_print(&th, stdout);
		return 0;
	}
	case OPT_LIST_FORMATS:
		list_formats();
		return 0;
	case 'h':
		usage(stdout);
		return 0;
	case 'V':
		printf("inferscope-analyze %s\n", ISC_VERSION);
		return 0;
	default:
		usage(stderr);
		return EXIT_USAGE;
	}
}

/* Options that only make sense together. */
static int check_gate_args(const struct cli *c)
{
	bool budgets = c->gate.default_set;
	for (int k = 0; k < ISC_CAT__COUNT; k++) {
		budgets |= c->gate.cat[k].set;
	}
	const char *need = NULL;
	if (budgets && c->gate.baseline == NULL) {
		need = "--max-regression needs --baseline";
	} else if (!isc_gate_active(&c->gate) &&
		   (c->junit != NULL || c->gate_summary != NULL ||
		    isc_writer_needs_gate(isc_writer_find(c->format)))) {
		need = "--junit, --gate-summary, -f junit and -f gate-md need --check or "
		       "--baseline";
	}
	if (need != NULL) {
		fprintf(stderr, "inferscope-analyze: %s\n", need);
		return EXIT_USAGE;
	}
	return -1;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	int opt;
	while ((opt = getopt_long(argc, argv, "f:o:hV", options, NULL)) != -1) {
		int r = parse_option(c, opt, optarg);
		if (r >= 0) {
			return r;
		}
	}
	c->inputs = argv + optind;
	c->n_inputs = argc - optind;
	if (c->n_inputs == 0) {
		fprintf(stderr, "inferscope-analyze: no trace given (see --help)\n");
		return EXIT_USAGE;
	}
	if (isc_writer_find(c->format) == NULL) {
		fprintf(stderr, "inferscope-analyze: unknown format '%s' (see --list-formats)\n",
			c->format);
		return EXIT_USAGE;
	}
	if (c->input_format != NULL && isc_reader_find(c->input_format) == NULL) {
		fprintf(stderr,
			"inferscope-analyze: unknown input format '%s' (see "
			"--list-formats)\n",
			c->input_format);
		return EXIT_USAGE;
	}
	return check_gate_args(c);
}

static int validate(const struct cli *c)
{
	int status = 0;
	for (int i = 0; i < c->n_inputs; i++) {
		struct isc_trace *t = isc_trace_create();
		struct isc_diag d = { "" };
		struct isc_read_opts ro = {
			.format = NULL, .validate = true, .threads = c->threads, .split = c->split
		};
		int r = t != NULL ? isc_read_file(t, c->inputs[i], &ro, &d) : -ENOMEM;
		if (r < 0) {
			fprintf(stderr, "inferscope-analyze: %s\n", t ? d.msg : "out of memory");
			status = EXIT_INPUT;
		} else {
			printf("%s: valid (InferScope format %s, %llu events)\n", c->inputs[i],
			       t->inputs[0].format_version,
			       (unsigned long long)(t->inputs[0].events + t->inputs[0].skipped));
		}
		isc_trace_destroy(t);
	}
	return status;
}

/* One output: path (NULL for standard output) written by the writer named name. */
static int write_output(const struct cli *c, const char *path, const char *name,
			const struct isc_trace *t, const struct isc_analysis *a,
			const struct isc_gate_result *g)
{
	FILE *f = path != NULL ? fopen(path, "w") : stdout;
	if (f == NULL) {
		fprintf(stderr, "inferscope-analyze: %s: %s\n", path, strerror(errno));
		return EXIT_OUTPUT;
	}
	struct isc_report_opts ro = { .top = c->top, .version = ISC_VERSION, .gate = g };
	int r = isc_writer_find(name)->write(f, t, a, &ro);
	if (fflush(f) != 0 || ferror(f)) {
		r = -EIO;
	}
	if (path != NULL && fclose(f) != 0) {
		r = -EIO;
	}
	if (r == -ENOTSUP) {
		fprintf(stderr, "inferscope-analyze: -f %s: not built in (meson -D%s=enabled)\n",
			name, name);
		return EXIT_OUTPUT;
	}
	if (r < 0) {
		fprintf(stderr, "inferscope-analyze: %s: write failed\n",
			path ? path : "standard output");
		return EXIT_OUTPUT;
	}
	return 0;
}

static int write_outputs(const struct cli *c, const struct isc_trace *t,
			 const struct isc_analysis *a, const struct isc_gate_result *g)
{
	int status = write_output(c, c->output, c->format, t, a, g);
	if (status == 0 && c->gate_summary != NULL) {
		status = write_output(c, c->gate_summary, "gate-md", t, a, g);
	}
	if (status == 0 && c->junit != NULL) {
		status = write_output(c, c->junit, "junit", t, a, g);
	}
	if (status == 0 && g != NULL && !g->passed) {
		status = EXIT_GATE;
	}
	return status;
}

/* This run against its checks and, with --baseline, against the baseline. */
static int run_gate(const struct cli *c, const struct isc_trace *t, const struct isc_analysis *a,
		    struct gate_run *gr)
{
	char label[PATH_MAX + 32];
	snprintf(label, sizeof(label), "%s", c->inputs[0]);
	if (c->n_inputs > 1) {
		snprintf(label + strlen(label), sizeof(label) - strlen(label), " (+%d more)",
			 c->n_inputs - 1);
	}
	if (isc_snapshot_from_analysis(t, a, label, &gr->cur) < 0) {
		fprintf(stderr, "inferscope-analyze: out of memory\n");
		return EXIT_INPUT;
	}
	if (c->gate.baseline != NULL) {
		struct isc_diag d = { "" };
		struct isc_read_opts ro = { .format = c->input_format };
		int r = isc_baseline_load(c->gate.baseline, &ro, &c->ao, &gr->base, &d);
		if (r < 0) {
			fprintf(stderr, "inferscope-analyze: baseline: %s\n",
				r == -ENOMEM ? "out of memory" : d.msg);
			return EXIT_INPUT;
		}
	}
	if (isc_gate_run(&c->gate, gr->cur, gr->base, &gr->result) < 0) {
		fprintf(stderr, "inferscope-analyze: out of memory\n");
		return EXIT_INPUT;
	}
	return 0;
}

static int read_inputs(const struct cli *c, struct isc_trace *t)
{
	struct isc_diag d = { "" };
	struct isc_read_opts ro = { .format = c->input_format,
				    .threads = c->threads,
				    .split = c->split };
	if (isc_read_inputs(t, (const char *const *)c->inputs, (size_t)c->n_inputs, &ro, &d) < 0) {
		fprintf(stderr, "inferscope-analyze: %s\n", d.msg);
		return EXIT_INPUT;
	}
	if (isc_trace_finalize(t) < 0) {
		fprintf(stderr, "inferscope-analyze: out of memory\n");
		return EXIT_INPUT;
	}
	return 0;
}

/* Descendants' traces beside the inputs that the report leaves out: named on stderr,
 * with the command that analyses them together (the report itself stays the inputs'). */
static void mention_descendants(const struct cli *c, const struct isc_trace *t)
{
	struct isc_path_list l = { NULL, 0, 0 };
	if (isc_descendant_traces(t, &l) == 0 && l.n > 0) {
		fprintf(stderr,
			"inferscope-analyze: %zu trace%s of descendant processes beside the "
			"input%s, not analysed here:\n",
			l.n, l.n > 1 ? "s" : "", c->n_inputs > 1 ? "s" : "");
		for (size_t i = 0; i < l.n; i++) {
			fprintf(stderr, "  %s\n", l.v[i]);
		}
		fprintf(stderr, "analyse them together with: inferscope-analyze");
		for (int i = 0; i < c->n_inputs; i++) {
			fprintf(stderr, " %s", c->inputs[i]);
		}
		for (size_t i = 0; i < l.n; i++) {
			fprintf(stderr, " %s", l.v[i]);
		}
		fprintf(stderr, "\n");
	}
	isc_path_list_finish(&l);
}

/*
 * A job (analysis/job.h): several inputs, each one rank, read and analysed one at a time
 * by c->jobs workers; only their summaries stay. The first input is analysed before the
 * workers start: when it is no rank (a parent process beside its children), the inputs
 * are one run and are read together instead (JOB_NOT_ONE). An input that cannot be read
 * or analysed is counted in the report and the others go on.
 */
enum { JOB_NOT_ONE = -2 };

struct job_slot {
	struct isc_rank_sum sum;
	char why[ISC_LINE];
	int state; /* 0 not done, 1 a rank, 2 failed, 3 not a rank */
};

struct job_run {
	const struct cli *c;
	struct job_slot *slots;
	pthread_mutex_t lock;
	int next;
	int held, held_max;
	int workers;
	bool stop;
};

static bool is_rank(const struct isc_trace *t)
{
	if (t->inputs[0].rank >= 0) {
		return true;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (isc_type_is_gpu(t->ev[i].type)) {
			return true;
		}
	}
	return false;
}

static void job_held(struct job_run *jr, int delta)
{
	pthread_mutex_lock(&jr->lock);
	jr->held += delta;
	jr->held_max = jr->held > jr->held_max ? jr->held : jr->held_max;
	pthread_mutex_unlock(&jr->lock);
}

static void job_one(struct job_run *jr, int i)
{
	const struct cli *c = jr->c;
	struct job_slot *sl = &jr->slots[i];
	struct isc_diag d = { "" };
	/* the first input is read alone, the others beside other workers: one thread each
	 * then, unless --threads says otherwise */
	unsigned threads = c->threads != 0 || i == 0 || jr->workers < 2 ? c->threads : 1;
	struct isc_read_opts ro = { .format = c->input_format,
				    .threads = threads,
				    .split = c->split };
	job_held(jr, 1);
	struct isc_trace *t = isc_trace_create();
	struct isc_analysis *a = NULL;
	int r = t == NULL ? -ENOMEM : isc_read_file(t, c->inputs[i], &ro, &d);
	r = r == 0 ? isc_trace_finalize(t) : r;
	if (r == 0 && !is_rank(t)) {
		sl->state = 3;
	} else {
		r = r == 0 ? isc_analyze(t, &c->ao, &a, &d) : r;
		r = r == 0 ? isc_rank_sum_from(t, a, c->inputs[i], &sl->sum) : r;
		sl->state = r == 0 ? 1 : 2;
		if (r != 0) {
			snprintf(sl->why, sizeof(sl->why), "%s",
				 r == -ENOMEM ? "out of memory" : d.msg);
		}
	}
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	job_held(jr, -1);
}

static void *job_worker(void *arg)
{
	struct job_run *jr = arg;
	for (;;) {
		pthread_mutex_lock(&jr->lock);
		int i = jr->stop || jr->next >= jr->c->n_inputs ? -1 : jr->next++;
		pthread_mutex_unlock(&jr->lock);
		if (i < 0) {
			return NULL;
		}
		job_one(jr, i);
		if (jr->slots[i].state == 3) {
			pthread_mutex_lock(&jr->lock);
			jr->stop = true;
			pthread_mutex_unlock(&jr->lock);
		}
	}
}

/* Two at once when there are two cores and two of the largest inputs, at about their
 * size in memory each (docs/benchmarks.md: the model takes less than the file), fit. */
static int job_workers(const struct cli *c)
{
	if (c->jobs > 0) {
		return c->jobs;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	off_t largest = 0;
	for (int i = 0; i < c->n_inputs; i++) {
		struct stat st;
		largest =
			stat(c->inputs[i], &st) == 0 && st.st_size > largest ? st.st_size : largest;
	}
	bool fits = c->max_memory == 0 || (size_t)largest * 2 <= c->max_memory;
	return cores >= 2 && fits ? 2 : 1;
}

static int write_job(const struct cli *c, const struct isc_job *job)
{
	FILE *f = c->output != NULL ? fopen(c->output, "w") : stdout;
	if (f == NULL) {
		fprintf(stderr, "inferscope-analyze: %s: %s\n", c->output, strerror(errno));
		return EXIT_OUTPUT;
	}
	int r = strcmp(c->format, "json") == 0 ? isc_job_write_json(f, job, ISC_VERSION)
					       : isc_job_write_md(f, job, ISC_VERSION);
	r = fflush(f) != 0 || ferror(f) ? -EIO : r;
	r = c->output != NULL && fclose(f) != 0 ? -EIO : r;
	if (r < 0) {
		fprintf(stderr, "inferscope-analyze: %s: write failed\n",
			c->output ? c->output : "standard output");
		return EXIT_OUTPUT;
	}
	return job->n_failed > 0 ? EXIT_INPUT : 0;
}

/* The job from the summaries: its report; exit 3 as well when an input was left out. */
static int finish_job(const struct cli *c, struct isc_job *job)
{
	int status = isc_job_finish(job) < 0 ? EXIT_INPUT : 0;
	if (status != 0) {
		fprintf(stderr, "inferscope-analyze: out of memory\n");
	} else if (job->n == 0) {
		fprintf(stderr, "inferscope-analyze: no input could be analysed\n");
		status = EXIT_INPUT;
	} else {
		status = write_job(c, job);
		if (job->n_failed > 0) {
			fprintf(stderr,
				"inferscope-analyze: %zu of %zu inputs not analysed (listed in the "
				"report)\n",
				job->n_failed, job->n + job->n_failed);
		}
	}
	isc_job_destroy(job);
	return status;
}

static int run_job(const struct cli *c)
{
	struct job_run jr = { .c = c, .next = 1 };
	jr.slots = calloc((size_t)c->n_inputs, sizeof(*jr.slots));
	if (jr.slots == NULL) {
		fprintf(stderr, "inferscope-analyze: out of memory\n");
		return EXIT_INPUT;
	}
	pthread_mutex_init(&jr.lock, NULL);
	jr.workers = job_workers(c);
	job_one(&jr, 0);
	pthread_t th[64];
	int started = 0;
	for (int w = 1; w < jr.workers && jr.slots[0].state != 3; w++) {
		started += pthread_create(&th[started], NULL, job_worker, &jr) == 0;
	}
	if (jr.slots[0].state != 3) {
		job_worker(&jr);
	}
	for (int w = 0; w < started; w++) {
		pthread_join(th[w], NULL);
	}
	pthread_mutex_destroy(&jr.lock);
	struct isc_job job;
	isc_job_init(&job);
	job.held_at_once = (size_t)jr.held_max;
	int status = jr.stop || jr.slots[0].state == 3 ? JOB_NOT_ONE : 0;
	for (int i = 0; i < c->n_inputs; i++) {
		struct job_slot *sl = &jr.slots[i];
		if (status == 0 && sl->state == 2) {
			fprintf(stderr, "inferscope-analyze: %s (left out of the job)\n", sl->why);
			status = isc_job_add_failed(&job, c->inputs[i], sl->why) < 0 ? EXIT_INPUT
										     : 0;
		} else if (status == 0 && sl->state == 1) {
			status = isc_job_add(&job, &sl->sum) < 0 ? EXIT_INPUT : 0;
		}
		isc_rank_sum_free(&sl->sum);
	}
	free(jr.slots);
	if (status != 0) {
		isc_job_destroy(&job);
		return status;
	}
	return finish_job(c, &job);
}

/* --merge: the job that per-host -f json results make up, from the results alone. */
static int run_merge(const struct cli *c)
{
	if (strcmp(c->format, "md") != 0 && strcmp(c->format, "json") != 0) {
		fprintf(stderr, "inferscope-analyze: --merge writes -f md or -f json\n");
		return EXIT_USAGE;
	}
	struct isc_job job;
	isc_job_init(&job);
	for (int i = 0; i < c->n_inputs; i++) {
		struct isc_diag d = { "" };
		int r = isc_job_merge_file(&job, c->inputs[i], &d);
		if (r < 0) {
			fprintf(stderr, "inferscope-analyze: --merge: %s\n",
				r == -ENOMEM ? "out of memory" : d.msg);
			isc_job_destroy(&job);
			return EXIT_INPUT;
		}
	}
	return finish_job(c, &job);
}

/* A job is tried for several inputs other than one process's segments, written as md or
 * json, without a gate or --what-if (they need the whole model). */
static bool job_eligible(const struct cli *c)
{
	if (c->n_inputs < 2 || c->validate || c->n_what_if > 0 || isc_gate_active(&c->gate) ||
	    (strcmp(c->format, "md") != 0 && strcmp(c->format, "json") != 0)) {
		return false;
	}
	for (int i = 0; i < c->n_inputs; i++) {
		if (strstr(c->inputs[i], ".seg-") != NULL) {
			return false;
		}
	}
	return true;
}

static int analyze(struct cli *c)
{
	struct isc_thresholds th;
	struct isc_diag d = { "" };
	isc_thresholds_init(&th);
	if (c->thresholds != NULL && isc_thresholds_load(&th, c->thresholds, &d) < 0) {
		fprintf(stderr, "inferscope-analyze: %s\n", d.msg);
		return EXIT_USAGE;
	}
	c->ao.th = &th;
	/* only the HTML report draws the critical path's pieces */
	c->ao.no_path_pieces = strcmp(c->format, "html") != 0;
	if (c->merge) {
		return run_merge(c);
	}
	if (job_eligible(c)) {
		int r = run_job(c);
		if (r != JOB_NOT_ONE) {
			return r;
		}
	}
	struct isc_trace *t = isc_trace_create();
	int status = t == NULL ? EXIT_INPUT : read_inputs(c, t);
	struct isc_analysis *a = NULL;
	if (status == 0) {
		int r = isc_analyze(t, &c->ao, &a, &d);
		if (r < 0) {
			fprintf(stderr, "inferscope-analyze: %s\n", d.msg);
			status = r == -ENOENT ? EXIT_USAGE : EXIT_INPUT;
		}
		/* The test suites set ISC_ANALYZE_CHECK: every report they make is checked
		 * against the result's invariants (analysis.h). */
		char msg[640];
		if (status == 0 && getenv("ISC_ANALYZE_CHECK") != NULL &&
		    !isc_analysis_check(a, msg, sizeof(msg))) {
			fprintf(stderr, "inferscope-analyze: invariant broken: %s\n", msg);
			status = EXIT_OUTPUT;
		}
	}
	struct gate_run gr = { NULL, NULL, NULL };
	if (status == 0 && isc_gate_active(&c->gate) && a->verdict.type == ISC_BOUND_UNKNOWN &&
	    strcmp(a->verdict.cause, "no_data") == 0) {
		/* A gate never passes on what it could not judge. */
		fprintf(stderr, "inferscope-analyze: %s: nothing to check: %s\n", c->inputs[0],
			a->verdict.n_evidence > 0 ? a->verdict.evidence[0] : "no data");
		status = EXIT_INPUT;
	}
	if (status == 0 && isc_gate_active(&c->gate)) {
		status = run_gate(c, t, a, &gr);
	}
	if (status == 0) {
		status = write_outputs(c, t, a, gr.result);
		mention_descendants(c, t);
	}
	isc_gate_result_destroy(gr.result);
	isc_snapshot_destroy(gr.base);
	isc_snapshot_destroy(gr.cur);
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	return status;
}

int main(int argc, char **argv)
{
	struct cli c = { .format = "md", .top = 10 };
	isc_mem_big_blocks();
	isc_gate_spec_init(&c.gate);
	c.max_memory = default_max_memory();
	isc_mem_bound(c.max_memory, over_memory);
	int r = parse_args(&c, argc, argv);
	if (r < 0) {
		r = c.validate ? validate(&c) : analyze(&c);
	}
	isc_gate_spec_finish(&c.gate);
	return r;
}
