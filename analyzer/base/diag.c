/* SPDX-License-Identifier: MIT */
#include "analyzer/base/diag.h"
#include "analyzer/base/escape.h"

#include <stdarg.h>
#include <stdio.h>

void isc_diag_set(struct isc_diag *d, const char *fmt, ...)
{
	char raw[sizeof(d->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* One line, whatever the input put into the message, and no control character a
	 * terminal would act on (names in it come from traces). */
	for (char *p = raw; *p != '\0'; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t') {
			*p = ' ';
		}
	}
	isc_esc_ctrl(d->msg, sizeof(d->msg), raw, '\0');
}
