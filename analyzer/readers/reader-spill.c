/* SPDX-License-Identifier: MIT */
/*
 * Spill files ("ISCSPILL"): the binary records a process left behind when it was killed
 * before its flush. The preload's own trace writer turns them into InferScope JSON (the
 * same code a live process uses at exit); the JSON goes to an unlinked temporary file
 * that the InferScope reader then reads. The trace is marked recovered and incomplete.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyzer/readers/reader.h"
#include "format/convert.h"

static size_t detect_spill(const struct isc_source *src)
{
	bool magic = src->raw_magic_len >= 8 && memcmp(src->raw_magic, "ISCSPILL", 8) == 0;
	return magic ? 0 : SIZE_MAX;
}

/* The spill as a mappable fd: the file itself, or the memory input copied to a memfd. */
static int spill_fd(const struct isc_source *src)
{
	if (src->fd >= 0) {
		return dup(src->fd);
	}
	int fd = memfd_create("inferscope-spill", MFD_CLOEXEC);
	size_t done = 0;
	while (fd >= 0 && done < src->mem_len) {
		ssize_t w = write(fd, src->mem + done, src->mem_len - done);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	return fd;
}

static int temp_fd(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/inferscope-spill-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd >= 0) {
		unlink(path);
	}
	return fd;
}

static int convert(struct isc_read_ctx *rc, int *json_fd)
{
	int in = spill_fd(rc->src), out = temp_fd();
	struct isc_convert_result res;
	int r = in < 0 || out < 0 ? -errno : isc_trace_convert(in, out, NULL, &res);
	if (in >= 0) {
		close(in);
	}
	if (r == 0 && lseek(out, 0, SEEK_SET) != 0) {
		r = -errno;
	}
	if (r < 0) {
		isc_diag_set(
			rc->diag, "%s: byte 0: spill file could not be converted: %s", rc->label,
			r == -EINVAL ? "not a spill file of this layout version" : strerror(-r));
		if (out >= 0) {
			close(out);
		}
		return r == -ENOMEM ? r : -EINVAL;
	}
	*json_fd = out;
	return 0;
}

/* The number after "key": in text, 0 when absent. */
static uint64_t lost_number(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/*
 * <stem>.lost.json beside <stem>.spill: the library could write no trace and counted
 * there the records that never reached the spill, and why (trace-format.md,
 * "unwritten"). Read into the input as a trace's trailer would be.
 */
static void read_lost_sidecar(struct isc_read_ctx *rc)
{
	size_t n = strlen(rc->label);
	char path[4200], text[1024];
	if (n < 6 || n + 16 > sizeof(path) || strcmp(rc->label + n - 6, ".spill") != 0) {
		return;
	}
	memcpy(path, rc->label, n - 6);
	memcpy(path + n - 6, ".lost.json", sizeof(".lost.json"));
	FILE *f = fopen(path, "re");
	size_t got = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f) {
		fclose(f);
	}
	text[got] = '\0';
	struct isc_input *in = &rc->t->inputs[rc->input];
	in->unwritten_events = lost_number(text, "\"events\":");
	const char *r = strstr(text, "\"reason\":\"");
	const char *end = r ? strchr(r + 10, '"') : NULL;
	if (in->unwritten_events > 0 && end != NULL) {
		in->unwritten_reason = isc_trace_intern(rc->t, r + 10, (size_t)(end - r - 10));
	}
}

static int read_spill(struct isc_read_ctx *rc)
{
	int fd;
	int r = convert(rc, &fd);
	if (r < 0) {
		return r;
	}
	struct isc_source json;
	r = isc_source_open_fd(&json, fd);
	char label[1100];
	snprintf(label, sizeof(label), "%s (recovered)", rc->label);
	struct isc_read_ctx inner = *rc;
	inner.src = &json;
	inner.label = label;
	if (r == 0) {
		r = isc_reader_inferscope.read(&inner);
	} else {
		isc_diag_set(rc->diag, "%s: %s", label, json.err);
	}
	isc_source_close(&json);
	rc->t->inputs[rc->input].format = "spill";
	if (r == 0) {
		read_lost_sidecar(rc);
	}
	return r;
}

const struct isc_reader isc_reader_spill = {
	.name = "spill",
	.what = "an InferScope spill file",
	.detect = detect_spill,
	.read = read_spill,
};
