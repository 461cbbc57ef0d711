/* SPDX-License-Identifier: MIT */
/*
 * One segment through the analyzer's stages: read (the spill reader, as
 * inferscope-analyze SEGMENT.spill does), finalize, analyse, then the metrics and the
 * pprof writer of analyzer/report.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/readers/reader.h"
#include "analyzer/report/report.h"
#include "isc-config.h"
#include "watch/watch.h"

/* The pprof writer into path, through path.tmp and a rename. */
static int write_pprof(const char *path, const struct isc_trace *t, const struct isc_analysis *a)
{
	char tmp[4200];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		return -ENAMETOOLONG;
	}
	/* 0600 like the segment: a profile names the program's functions and files */
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		int e = errno;
		if (fd >= 0) {
			close(fd);
		}
		return -e;
	}
	struct isc_report_opts ro = { .top = 10, .version = ISC_VERSION, .gate = NULL };
	int r = isc_writer_find("pprof")->write(f, t, a, &ro);
	if (fclose(f) != 0 && r == 0) {
		r = -EIO;
	}
	if (r == 0 && rename(tmp, path) != 0) {
		r = -errno;
	}
	if (r != 0) {
		unlink(tmp);
	}
	return r;
}

int isc_watch_analyse(const char *path, const struct isc_thresholds *th, const char *host_fallback,
		      int64_t pid_fallback, const char *pprof_path, struct isc_segment_metrics *m,
		      uint64_t *events, int *pprof_rc, char *err, size_t cap)
{
	struct isc_trace *t = isc_trace_create();
	struct isc_analysis *a = NULL;
	struct isc_diag d = { "" };
	struct isc_read_opts ro = { .format = NULL };
	struct isc_analyze_opts ao = { .th = th };
	*events = 0;
	*pprof_rc = 0;
	int r = t == NULL ? -ENOMEM : isc_read_file(t, path, &ro, &d);
	r = r == 0 ? isc_trace_finalize(t) : r;
	r = r == 0 ? isc_analyze(t, &ao, &a, &d) : r;
	if (r == 0) {
		*events = t->n;
		r = isc_segment_metrics(t, a, m);
	}
	if (r == 0) {
		if (m->host[0] == '\0') {
			snprintf(m->host, sizeof(m->host), "%s", host_fallback);
		}
		m->pid = m->pid != 0 ? m->pid : pid_fallback;
		*pprof_rc = pprof_path != NULL ? write_pprof(pprof_path, t, a) : 0;
		if (*pprof_rc < 0 && *pprof_rc != -ENOTSUP) {
			snprintf(err, cap, "%s: %s", pprof_path, strerror(-*pprof_rc));
		}
	} else {
		snprintf(err, cap, "%s", r == -ENOMEM ? "out of memory" : d.msg);
	}
	isc_analysis_destroy(a);
	isc_trace_destroy(t);
	return r;
}
