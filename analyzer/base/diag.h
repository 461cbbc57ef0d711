/* SPDX-License-Identifier: MIT */
/* One line that says what went wrong with an input: file, position, problem. */
#ifndef ISC_DIAG_H
#define ISC_DIAG_H

struct isc_diag {
	char msg[1024];
};

void isc_diag_set(struct isc_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* ISC_DIAG_H */
