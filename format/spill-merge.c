/* SPDX-License-Identifier: MIT */
/*
 * Segments into one spill: how a flight recorder's retained segments become one trace
 * (the recorder's freeze, a capture window spanning segments). Block by block, with
 * writev straight from the mapped segments: no heap, no copy beyond the kernel's.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "format/spill.h"

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One segment's blocks; META and SYSINFO only where a new image starts. */
static int copy_blocks(struct isc_spill_reader *rd, int out, bool first, bool *new_image)
{
	struct isc_spill_ref b;
	bool keep_start = first || *new_image;
	*new_image = false;
	while (isc_spill_reader_next(rd, &b) == 1) {
		if ((b.type == ISC_BLK_META || b.type == ISC_BLK_SYSINFO) && !keep_start) {
			continue;
		}
		if (b.type == ISC_BLK_SEGMENT) {
			*new_image = true; /* the image exec'd: the next segment is another's */
		}
		size_t whole = sizeof(struct isc_spill_block) + ((b.size + 7) & ~(size_t)7);
		size_t have = rd->size - b.offset;
		int r = write_all(out, rd->base + b.offset, whole < have ? whole : have);
		if (r < 0) {
			return r;
		}
	}
	return 0;
}

int isc_spill_merge(const char *const *paths, size_t n, int out_fd, int *errs)
{
	bool header = false, new_image = false;
	size_t skip = 0;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct isc_spill_reader rd;
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		int e = fd < 0 ? -errno : isc_spill_reader_open(&rd, fd);
		if (errs) {
			errs[i] = -e;
		}
		if (e < 0) {
			skip++; /* deleted by retention meanwhile, or not a spill */
			if (fd >= 0) {
				close(fd);
			}
			continue;
		}
		close(fd);
		if (!header) {
			r = write_all(out_fd, rd.base, sizeof(struct isc_spill_header));
			header = true;
		}
		if (r == 0) {
			r = copy_blocks(&rd, out_fd, i == 0 || skip == i, &new_image);
		}
		isc_spill_reader_close(&rd);
	}
	if (r == 0 && !header) {
		r = -ENOENT;
	}
	return r;
}
