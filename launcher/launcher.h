/* SPDX-License-Identifier: MIT */
#ifndef ISC_LAUNCHER_H
#define ISC_LAUNCHER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define ISC_LAUNCH_MAX_ENV 32 /* more than the options that set a variable */

struct isc_launch_opts {
	const char *format; /* md, json, html */
	const char *report; /* file, or NULL for stdout */
	bool no_report;
	char output_abs[PATH_MAX]; /* the trace the command writes */
	const char *env_name[ISC_LAUNCH_MAX_ENV];
	const char *env_value[ISC_LAUNCH_MAX_ENV];
	size_t n_env;
};

/* Parses `run` options; returns the index of the command in argv, or -1 after
 * printing a message (usage error). */
int isc_launcher_parse(int argc, char **argv, struct isc_launch_opts *o);
/* Sets the environment for the command: INFERSCOPE_* and LD_PRELOAD. */
int isc_launcher_export(const struct isc_launch_opts *o, const char *library);
void isc_launcher_usage(FILE *f);

/* The trace files of a run (traces.c). */
struct isc_trace_file {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct isc_trace_set {
	struct isc_trace_file *v;
	size_t n, cap;
};

/* Adds the files a run writing output can leave: output itself, stem.PID[.N].json and
 * stem.PID.spill. Returns 0 or -ENOMEM. */
int isc_traces_scan(const char *output, struct isc_trace_set *s);
/* The files of after that are not in before, or changed since; paths borrowed from
 * after, output's first. Returns how many. */
size_t isc_traces_new(const struct isc_trace_set *before, const struct isc_trace_set *after,
		      const char **out, size_t max);
void isc_traces_finish(struct isc_trace_set *s);

/* `inferscope capture` (capture.c): argv[0] is "capture". Returns the exit status. */
int isc_capture_main(int argc, char **argv);
void isc_capture_usage(FILE *f);

bool isc_launcher_find_library(char *out, size_t cap);
bool isc_launcher_find_analyzer(char *out, size_t cap);
/* A program installed beside the launcher (inferscope-analyze, inferscope-watch). */
bool isc_launcher_find_tool(const char *name, char *out, size_t cap);

#endif /* ISC_LAUNCHER_H */
