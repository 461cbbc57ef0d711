/* SPDX-License-Identifier: MIT */
/* The options of `inferscope run`: one table, each row an INFERSCOPE_* variable.
 * Values are checked with the library's own parsers, so a bad value fails here, at
 * once, instead of being replaced by a default inside the profiled process. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "launcher/launcher.h"

struct opt {
	const char *name;
	int short_name;		/* 0 = none */
	const char *arg;	/* NULL: a flag */
	const char *env;	/* NULL: a launcher option */
	const char *flag_value; /* value of env for a flag */
	const char *help;
};

static const struct opt opts[] = {
	{ "output", 'o', "FILE", "INFERSCOPE_OUTPUT", NULL,
	  "trace file (default trace.json); descendants write FILE-stem.PID.json beside it" },
	{ "format", 'f', "FMT", NULL, NULL, "report format: md (default), json, html" },
	{ "report", 'r', "FILE", NULL, NULL, "write the report to FILE instead of stdout" },
	{ "no-report", 0, NULL, NULL, NULL, "only write the trace" },
	{ "delay", 0, "DURATION", "INFERSCOPE_DELAY", NULL, "start recording after DURATION" },
	{ "duration", 0, "DURATION", "INFERSCOPE_DURATION", NULL, "record for DURATION" },
	{ "start-paused", 0, NULL, "INFERSCOPE_START_PAUSED", "1",
	  "record only after inferscope_capture_start() or cudaProfilerStart()" },
	{ "max-memory", 0, "SIZE", "INFERSCOPE_MAX_MEMORY", NULL, "memory for event buffers" },
	{ "snapshot-signal", 0, "SIG", "INFERSCOPE_SNAPSHOT_SIGNAL", NULL,
	  "signal that writes a snapshot trace (e.g. SIGUSR2)" },
	{ "handle-signals", 0, NULL, "INFERSCOPE_HANDLE_SIGNALS", "1",
	  "write the trace on SIGTERM/SIGINT" },
	{ "malloc-sample", 0, "SIZE", "INFERSCOPE_MALLOC_SAMPLE", NULL,
	  "mean bytes between sampled allocations" },
	{ "malloc-threshold", 0, "SIZE", "INFERSCOPE_MALLOC_THRESHOLD", NULL,
	  "always record allocations this large" },
	{ "syscall-threshold", 0, "DURATION", "INFERSCOPE_SYSCALL_THRESHOLD", NULL,
	  "record system calls this long" },
	{ "stacks", 0, "N", "INFERSCOPE_STACKS", NULL, "frames of stack on sampled events" },
	{ "no-malloc", 0, NULL, "INFERSCOPE_MALLOC", "0", "no malloc-family hooks" },
	{ "no-syscalls", 0, NULL, "INFERSCOPE_SYSCALLS", "0", "no system-call hooks" },
	{ "no-cuda", 0, NULL, "INFERSCOPE_CUDA", "0", "no CUDA runtime hooks" },
	{ "no-cupti", 0, NULL, "INFERSCOPE_CUPTI", "0", "no GPU timeline (CUPTI)" },
	{ "no-nvtx", 0, NULL, "INFERSCOPE_NVTX", "0", "do not take NVTX ranges" },
	{ "debug", 'd', NULL, "INFERSCOPE_DEBUG", "1", "say what the library does" },
	{ NULL, 0, NULL, NULL, NULL, NULL },
};

void isc_launcher_usage(FILE *f)
{
	fprintf(f, "usage: inferscope run [options] -- COMMAND [ARGS...]\n"
		   "       inferscope analyze [inferscope-analyze options] TRACE...\n"
		   "       inferscope capture PID [--steps N | --duration D] [-o FILE]\n"
		   "       inferscope watch [inferscope-watch options] DIR\n"
		   "       inferscope --version\n\n"
		   "run options:\n");
	for (const struct opt *o = opts; o->name; o++) {
		char left[64], sn[8] = "    ";
		if (o->short_name) {
			snprintf(sn, sizeof(sn), "-%c, ", o->short_name);
		}
		snprintf(left, sizeof(left), "%s--%s%s%s", sn, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-30s %s\n", left, o->help);
	}
	fprintf(f, "  %-30s %s\n", "-h, --help", "this help");
	fprintf(f, "\nThe command's exit status is inferscope's; a command killed by a signal\n"
		   "makes inferscope die of the same signal. See inferscope(1).\n");
}

static const struct isc_cfg_entry *entry(const char *env)
{
	for (const struct isc_cfg_entry *e = isc_config_table(); e->name; e++) {
		if (strcmp(e->name, env) == 0) {
			return e;
		}
	}
	return NULL;
}

/* Checks a value with the library's parser for that variable. */
static bool valid(const char *env, const char *v)
{
	const struct isc_cfg_entry *e = entry(env);
	uint64_t u;
	int64_t i;
	bool b;
	int s;
	switch (e ? e->type : ISC_CFG_STRING) {
	case ISC_CFG_BOOL:
		return isc_parse_bool(v, &b);
	case ISC_CFG_INT:
		return isc_parse_int(v, &i) && i >= e->min && i <= e->max;
	case ISC_CFG_SIZE:
		return isc_parse_size(v, &u);
	case ISC_CFG_DURATION:
		return isc_parse_duration(v, &u);
	case ISC_CFG_SIGNAL:
		return isc_parse_signal(v, &s) && s != 0;
	case ISC_CFG_STRING:
		return *v != '\0';
	}
	return false;
}

static int apply(struct isc_launch_opts *lo, const struct opt *o, const char *arg)
{
	if (strcmp(o->name, "format") == 0) {
		if (strcmp(arg, "md") && strcmp(arg, "json") && strcmp(arg, "html")) {
			fprintf(stderr, "inferscope: --format: '%s' is not md, json or html\n",
				arg);
			return -1;
		}
		lo->format = arg;
	} else if (strcmp(o->name, "report") == 0) {
		lo->report = arg;
	} else if (strcmp(o->name, "no-report") == 0) {
		lo->no_report = true;
	}
	if (o->env == NULL) {
		return 0;
	}
	const char *v = o->arg ? arg : o->flag_value;
	if (!valid(o->env, v)) {
		fprintf(stderr, "inferscope: --%s: '%s' is not a valid %s\n", o->name, v,
			o->arg ? o->arg : "value");
		return -1;
	}
	/* one entry per variable: a repeated option overrides the earlier one, so the
	 * table (one row per option at most) never overflows */
	size_t i = 0;
	while (i < lo->n_env && strcmp(lo->env_name[i], o->env) != 0) {
		i++;
	}
	lo->env_name[i] = o->env;
	lo->env_value[i] = v;
	lo->n_env += i == lo->n_env;
	if (strcmp(o->env, "INFERSCOPE_OUTPUT") == 0) {
		snprintf(lo->output_abs, sizeof(lo->output_abs), "%s", v);
	}
	return 0;
}

int isc_launcher_parse(int argc, char **argv, struct isc_launch_opts *lo)
{
	struct option longs[sizeof(opts) / sizeof(opts[0]) + 1]; /* + --help */
	char shorts[64] = "+h";
	size_t n = 0;

	memset(lo, 0, sizeof(*lo));
	lo->format = "md";
	snprintf(lo->output_abs, sizeof(lo->output_abs), "trace.json");
	for (const struct opt *o = opts; o->name; o++, n++) {
		longs[n] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
					    o->short_name ? o->short_name : 1000 + (int)n };
		if (o->short_name) {
			size_t k = strlen(shorts);
			shorts[k] = (char)o->short_name;
			shorts[k + 1] = o->arg ? ':' : '\0';
			shorts[k + 2] = '\0';
		}
	}
	longs[n] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == 'h') {
			isc_launcher_usage(stdout);
			exit(0);
		}
		const struct opt *o = NULL;
		for (size_t i = 0; i < n; i++) {
			if (longs[i].val == c) {
				o = &opts[i];
			}
		}
		if (o == NULL) {
			/* getopt said which option; the whole usage would bury that line */
			fprintf(stderr, "inferscope run: see inferscope run --help\n");
			return -1;
		}
		if (apply(lo, o, optarg) < 0) {
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "inferscope run: no command given (inferscope run [options] -- "
				"COMMAND)\n");
		return -1;
	}
	/* an absolute trace path, so the report finds it whatever the command does */
	if (lo->output_abs[0] != '/') {
		char cwd[PATH_MAX], rel[PATH_MAX];
		snprintf(rel, sizeof(rel), "%s", lo->output_abs);
		if (getcwd(cwd, sizeof(cwd)) && strlen(cwd) + strlen(rel) + 2 <= PATH_MAX) {
			strcpy(lo->output_abs, cwd);
			strcat(lo->output_abs, "/");
			strcat(lo->output_abs, rel);
		}
	}
	return optind;
}

int isc_launcher_export(const struct isc_launch_opts *lo, const char *library)
{
	for (size_t i = 0; i < lo->n_env; i++) {
		setenv(lo->env_name[i], lo->env_value[i], 1);
	}
	setenv("INFERSCOPE_OUTPUT", lo->output_abs, 1);
	/* ours first, the user's preloads (an allocator, say) kept after it */
	const char *old = getenv("LD_PRELOAD");
	if (old == NULL || *old == '\0') {
		setenv("LD_PRELOAD", library, 1);
	} else if (strstr(old, library) == NULL) {
		size_t n = strlen(library) + strlen(old) + 2;
		char *buf = malloc(n);
		if (buf == NULL) {
			return -ENOMEM;
		}
		snprintf(buf, n, "%s:%s", library, old);
		setenv("LD_PRELOAD", buf, 1);
		free(buf);
	}
	/* a fresh session: the command is the process the user started */
	unsetenv("INFERSCOPE_ROOT_PID");
	unsetenv("INFERSCOPE_EXEC_SEQ");
	return 0;
}
