/* SPDX-License-Identifier: MIT */
/* Reading small procfs and sysfs files without stdio or malloc (collector thread,
 * flush, constructor). */
#ifndef ISC_PROCFS_H
#define ISC_PROCFS_H

#include <stddef.h>

/* Reads up to cap - 1 bytes of path into buf and NUL-terminates them; returns the
 * bytes read, 0 when the file cannot be read (buf is then ""). */
size_t isc_slurp(const char *path, char *buf, size_t cap);

#endif /* ISC_PROCFS_H */
