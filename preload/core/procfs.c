/* SPDX-License-Identifier: MIT */
#include "preload/core/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

size_t isc_slurp(const char *path, char *buf, size_t cap)
{
	size_t n = 0;
	if (cap == 0) {
		return 0;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			break;
		}
		n += (size_t)r;
	}
	if (fd >= 0) {
		close(fd);
	}
	buf[n] = '\0';
	return n;
}
