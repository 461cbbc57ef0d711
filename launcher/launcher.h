/* SPDX-License-Identifier: MIT */
#ifndef ISC_LAUNCHER_H
#define ISC_LAUNCHER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define ISC_LAUNCH_MAX_ENV 32

struct isc_launch_opts {
	const char *format;		/* md, json, html */
	const char *report;		/* file, or NULL for stdout */
	bool no_report;
	char output_abs[PATH_MAX];	/* the trace the command writes */
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

bool isc_launcher_find_library(char *out, size_t cap);
bool isc_launcher_find_analyzer(char *out, size_t cap);

#endif /* ISC_LAUNCHER_H */
