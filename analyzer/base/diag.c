/* SPDX-License-Identifier: MIT */
#include "analyzer/base/diag.h"

#include <stdarg.h>
#include <stdio.h>

void isc_diag_set(struct isc_diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	/* One line, whatever the input put into the message. */
	for (char *p = d->msg; *p != '\0'; p++) {
		if (*p == '\n' || *p == '\r') {
			*p = ' ';
		}
	}
}
