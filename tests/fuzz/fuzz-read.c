/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: one input through a reader (FUZZ_FORMAT, or detection when it is
 * NULL), then, when it reads, the whole analysis and every writer. Built by
 * tests/fuzz/meson.build with -Dfuzz=true (scripts/sanitize.sh, scripts/fuzz.sh).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/analysis/analysis.h"
#include "analyzer/readers/reader.h"
#include "analyzer/report/report.h"

#ifndef FUZZ_FORMAT
#define FUZZ_FORMAT NULL
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (null == NULL) {
		null = fopen("/dev/null", "w");
	}
	struct isc_trace *t = isc_trace_create();
	struct isc_diag d;
	struct isc_read_opts o = { .format = FUZZ_FORMAT };
	if (isc_read_buffer(t, "fuzz", data, size, &o, &d) == 0 && isc_trace_finalize(t) == 0) {
		struct isc_analysis *a = NULL;
		if (isc_analyze(t, NULL, &a, &d) == 0) {
			struct isc_report_opts ro = { .top = 5, .version = "fuzz" };
			size_t n;
			const struct isc_writer *const *w = isc_writers(&n);
			for (size_t i = 0; i < n; i++) {
				w[i]->write(null, t, a, &ro);
			}
		}
		isc_analysis_destroy(a);
	}
	isc_trace_destroy(t);
	return 0;
}
