/* SPDX-License-Identifier: MIT */
/*
 * Spill files ("ISCSPILL"): the binary records a process killed before its flush leaves
 * behind. They are recognised here so that they get a clear answer; turning them into
 * events needs the preload's converter (preload/output), which this build does not have.
 */
#include <errno.h>
#include <string.h>

#include "reader.h"

static size_t detect_spill(const struct isc_source *src)
{
	bool magic = src->raw_magic_len >= 8 && memcmp(src->raw_magic, "ISCSPILL", 8) == 0;
	return magic ? 0 : SIZE_MAX;
}

static int read_spill(struct isc_read_ctx *rc)
{
	isc_diag_set(rc->diag, "%s: byte 0: an InferScope spill file (left by a process that "
		     "did not flush): reading spill files is not supported yet by this build",
		     rc->label);
	return -ENOTSUP;
}

const struct isc_reader isc_reader_spill = {
	.name = "spill",
	.what = "an InferScope spill file",
	.detect = detect_spill,
	.read = read_spill,
};
