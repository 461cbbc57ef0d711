/* SPDX-License-Identifier: MIT */
/*
 * The traces a run's descendants left beside the trace of the process the user started
 * (libinferscope(7), INFERSCOPE_OUTPUT): for an input STEM.json, the files
 * STEM.PID.json, STEM.PID.N.json and STEM.PID.spill written since that process
 * started, which the inputs do not include. The report says they exist and how to
 * analyse them together, rather than describe the parent alone in silence.
 */
#ifndef ISC_DESCENDANTS_H
#define ISC_DESCENDANTS_H

#include <stddef.h>

#include "analyzer/model/model.h"

struct isc_path_list {
	char **v;
	size_t n, cap;
};

/* Fills out (empty on entry) with those files, sorted; 0 or -ENOMEM. */
int isc_descendant_traces(const struct isc_trace *t, struct isc_path_list *out);
void isc_path_list_finish(struct isc_path_list *l);

#endif /* ISC_DESCENDANTS_H */
