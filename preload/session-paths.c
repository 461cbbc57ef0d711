/* SPDX-License-Identifier: MIT */
/* Where the session's files go (session.h, "Paths"). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "common/trace-name.h"
#include "preload/session.h"

size_t isc_session_stem_len(const char *path)
{
	size_t n = strlen(path);
	return (n > 5 && strcmp(path + n - 5, ".json") == 0) ? n - 5 : n;
}

/* <stem>.<pid>[.<seq>]<suffix> */
static void derived_path(char *out, const char *output, const char *suffix)
{
	struct isc_session *s = &isc_session;
	size_t n = isc_session_stem_len(output);
	char seq[16] = "";
	if (s->exec_seq > 0) {
		isc_fmt(seq, sizeof(seq), ".%u", s->exec_seq);
	}
	isc_fmt(out, PATH_MAX, "%s", output);
	isc_fmt(out + n, PATH_MAX - n, ".%d%s%s", s->pid, seq, suffix);
}

static bool dir_writable(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (n == 0) {
		strcpy(dir, "/");
	}
	return access(dir, W_OK | X_OK) == 0;
}

void isc_session_resolve_output(void)
{
	struct isc_session *s = &isc_session;
	char cwd[PATH_MAX], dir[PATH_MAX];
	const char *out = isc_config.output;

	if (out[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL) {
		isc_fmt(s->output, sizeof(s->output), "%s/%s", cwd, out);
	} else {
		isc_fmt(s->output, sizeof(s->output), "%s", out);
	}
	if (!dir_writable(s->output, dir)) {
		int e = errno;
		const char *tmp = getenv("TMPDIR");
		const char *base = strrchr(s->output, '/');
		char fallback[PATH_MAX], tmp_dir[PATH_MAX];
		isc_fmt(fallback, sizeof(fallback), "%s/%s", tmp && tmp[0] == '/' ? tmp : "/tmp",
			base ? base + 1 : s->output);
		if (!dir_writable(fallback, tmp_dir)) {
			/* the last place with a name (tmpfs: memory, reopened by path) */
			isc_fmt(fallback, sizeof(fallback), "/dev/shm/%s",
				base ? base + 1 : s->output);
		}
		/* Only the process the user started says it: children would repeat it. */
		if (s->is_root && s->exec_seq == 0) {
			isc_error("cannot write to %s (%s); the trace goes to %s instead", dir,
				  strerror(e), fallback);
		}
		memcpy(s->output, fallback, sizeof(fallback));
	}
	/* The process the user started never replaces an earlier run's trace (a flight
	 * recorder's files carry its pid already). Its descendants and later images are
	 * handed the name chosen here. */
	char fresh[PATH_MAX];
	if (s->is_root && s->exec_seq == 0 && !isc_config.continuous &&
	    isc_trace_name_free(s->output, fresh, sizeof(fresh)) > 1) {
		isc_error("%s exists: this run's trace is %s", s->output, fresh);
		memcpy(s->output, fresh, sizeof(fresh));
	}
}

void isc_session_make_paths(void)
{
	struct isc_session *s = &isc_session;
	if (s->is_root && s->exec_seq == 0) {
		isc_fmt(s->trace_path, sizeof(s->trace_path), "%s", s->output);
	} else {
		derived_path(s->trace_path, s->output,
			     s->output[isc_session_stem_len(s->output)] ? ".json" : "");
	}
	derived_path(s->spill_path, s->output, ".spill");
}
