/* SPDX-License-Identifier: MIT */
/*
 * The watcher's loop and its state: the processes' metrics, the directory, the HTTP
 * server. Single-threaded on purpose: the analysis is the only heavy work, a scrape
 * waits for at most one segment, and nothing needs a lock.
 */
#include "watch/watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "analyzer/base/diag.h"
#include "analyzer/model/thresholds.h"
#include "watch/http.h"
#include "watch/segments.h"

struct watch {
	const struct isc_watch_opts *o;
	struct isc_thresholds th;
	char host[256];
	struct isc_proc_metrics *procs;
	size_t n_procs;
	uint64_t seq;
	struct isc_watch_self self;
	bool pprof_missing_said;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The process's slot, created (evicting the least recently updated when full). */
static struct isc_proc_metrics *proc_of(struct watch *w, const char *host, int64_t pid)
{
	for (size_t i = 0; i < w->n_procs; i++) {
		if (w->procs[i].pid == pid && strcmp(w->procs[i].host, host) == 0) {
			return &w->procs[i];
		}
	}
	size_t k = w->n_procs;
	if (k == w->o->max_procs) {
		k = 0;
		for (size_t i = 1; i < w->n_procs; i++) {
			k = w->procs[i].seq < w->procs[k].seq ? i : k;
		}
	} else {
		w->n_procs++;
	}
	struct isc_proc_metrics *p = &w->procs[k];
	memset(p, 0, sizeof(*p));
	snprintf(p->host, sizeof(p->host), "%s", host);
	p->pid = pid;
	return p;
}

static void segment_added(void *ctx, const char *name)
{
	struct watch *w = ctx;
	struct isc_segname sn;
	if (!isc_segment_name(name, &sn)) {
		return;
	}
	char path[4096], pprof[4200];
	snprintf(path, sizeof(path), "%s/%s", w->o->dir, name);
	snprintf(pprof, sizeof(pprof), "%s.pb.gz", path);
	struct isc_segment_metrics m;
	uint64_t events = 0;
	int prc = 0;
	char err[512] = "";
	double t0 = now_s();
	int r = isc_watch_analyse(path, &w->th, w->host, sn.pid, w->o->pprof ? pprof : NULL, &m,
				  &events, &prc, err, sizeof(err));
	double dt = now_s() - t0;
	w->self.analysis_seconds += dt;
	if (r < 0) {
		w->self.failed++;
		fprintf(stderr, "inferscope watch: %s: %s\n", name, err);
		return;
	}
	w->self.analysed++;
	w->self.events += events;
	struct isc_proc_metrics *p = proc_of(w, m.host, m.pid);
	p->seq = ++w->seq;
	isc_proc_update(p, &m);
	if (prc == -ENOTSUP && !w->pprof_missing_said) {
		fprintf(stderr, "inferscope watch: pprof is not built in: no profiles written\n");
		w->pprof_missing_said = true;
	} else if (prc < 0 && prc != -ENOTSUP) {
		fprintf(stderr, "inferscope watch: %s\n", err);
	}
	if (w->o->verbose) {
		fprintf(stderr, "inferscope watch: %s: %llu events in %.1f ms, %s\n", name,
			(unsigned long long)events, dt * 1e3, isc_bound_name(m.bound));
	}
}

/* The segment went (the recorder's retention): its profile goes with it. */
static void segment_removed(void *ctx, const char *name)
{
	struct watch *w = ctx;
	char pprof[4200];
	snprintf(pprof, sizeof(pprof), "%s/%s.pb.gz", w->o->dir, name);
	unlink(pprof);
}

static bool wants_openmetrics(const char *accept)
{
	return strstr(accept, "application/openmetrics-text") != NULL;
}

static void serve_metrics(struct watch *w, const struct isc_http_request *rq,
			  struct isc_http_response *rs)
{
	bool om = wants_openmetrics(rq->accept);
	FILE *f = open_memstream(&rs->body, &rs->len);
	if (f == NULL) {
		return;
	}
	isc_metrics_write(f, w->procs, w->n_procs, &w->self, om);
	if (fclose(f) != 0) {
		free(rs->body);
		rs->body = NULL;
		return;
	}
	rs->status = 200;
	rs->content_type = om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			      : "text/plain; version=0.0.4; charset=utf-8";
}

/* /debug/pprof/profile?segment=NAME: the profile written beside a known segment. */
static void serve_profile(struct watch *w, const char *query, struct isc_http_response *rs)
{
	struct isc_segname sn;
	const char *name = strncmp(query, "segment=", 8) == 0 ? query + 8 : "";
	rs->status = 404;
	if (!w->o->pprof || strchr(name, '/') != NULL || strchr(name, '&') != NULL ||
	    !isc_segment_name(name, &sn)) {
		return;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s.pb.gz", w->o->dir, name);
	FILE *f = fopen(path, "rbe");
	if (f == NULL) {
		return;
	}
	FILE *out = open_memstream(&rs->body, &rs->len);
	char buf[65536];
	size_t n;
	while (out != NULL && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		fwrite(buf, 1, n, out);
	}
	fclose(f);
	if (out == NULL || fclose(out) != 0) {
		free(rs->body);
		rs->body = NULL;
		rs->status = 500;
		return;
	}
	rs->status = 200;
	rs->content_type = "application/octet-stream";
}

static void handle(void *ctx, const struct isc_http_request *rq, struct isc_http_response *rs)
{
	struct watch *w = ctx;
	const char *q = strchr(rq->target, '?');
	size_t plen = q ? (size_t)(q - rq->target) : strlen(rq->target);
	if (plen == 8 && strncmp(rq->target, "/metrics", 8) == 0) {
		serve_metrics(w, rq, rs);
	} else if (plen == 20 && strncmp(rq->target, "/debug/pprof/profile", 20) == 0) {
		serve_profile(w, q ? q + 1 : "", rs);
	} else if (plen == 1 && rq->target[0] == '/') {
		static const char index[] = "inferscope watch: /metrics, "
					    "/debug/pprof/profile?segment=NAME\n";
		rs->body = strdup(index);
		rs->len = rs->body ? sizeof(index) - 1 : 0;
		rs->status = rs->body ? 200 : 500;
	} else {
		rs->status = 404;
	}
}

static int setup(struct watch *w, const struct isc_watch_opts *o)
{
	memset(w, 0, sizeof(*w));
	w->o = o;
	isc_thresholds_init(&w->th);
	struct isc_diag d = { "" };
	if (o->thresholds != NULL && isc_thresholds_load(&w->th, o->thresholds, &d) < 0) {
		fprintf(stderr, "inferscope watch: %s\n", d.msg);
		return 2;
	}
	if (gethostname(w->host, sizeof(w->host) - 1) != 0) {
		snprintf(w->host, sizeof(w->host), "unknown");
	}
	w->procs = calloc(o->max_procs, sizeof(*w->procs));
	if (w->procs == NULL) {
		fprintf(stderr, "inferscope watch: out of memory\n");
		return 3;
	}
	return -1;
}

static int loop(struct watch *w, struct isc_segdir *sd, struct isc_http *h,
		volatile sig_atomic_t *stop)
{
	const struct isc_segdir_ops ops = { segment_added, segment_removed, w };
	int64_t next_scan = now_ms() + w->o->rescan_ms;
	struct pollfd pf[ISC_HTTP_CLIENTS + 2];
	while (!*stop) {
		size_t n = isc_http_pollfds(h, pf, ISC_HTTP_CLIENTS + 1);
		size_t in = n;
		if (sd->ifd >= 0) {
			pf[n++] = (struct pollfd){ sd->ifd, POLLIN, 0 };
		}
		int64_t wait = next_scan - now_ms();
		int r = poll(pf, n, wait < 0 ? 0 : wait > 1000 ? 1000 : (int)wait);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "inferscope watch: poll: %s\n", strerror(errno));
			return 3;
		}
		if (r >= 0) {
			/* also on a timeout: idle clients are dropped */
			isc_http_service(h, pf, in, now_ms(), handle, w);
		}
		if (r > 0 && in < n && (pf[in].revents & POLLIN)) {
			isc_segdir_events(sd, &ops);
		}
		if (sd->overflowed || now_ms() >= next_scan) {
			isc_segdir_rescan(sd, &ops);
			next_scan = now_ms() + w->o->rescan_ms;
		}
	}
	return 0;
}

int isc_watch_run(const struct isc_watch_opts *o, volatile sig_atomic_t *stop)
{
	struct watch w;
	int status = setup(&w, o);
	if (status >= 0) {
		free(w.procs);
		return status;
	}
	struct isc_segdir sd;
	int r = isc_segdir_open(&sd, o->dir);
	if (r < 0) {
		fprintf(stderr, "inferscope watch: %s: %s\n", o->dir, strerror(-r));
		free(w.procs);
		return 3;
	}
	const struct isc_segdir_ops ops = { segment_added, segment_removed, &w };
	struct isc_http h = { .fd = -1 };
	char err[512];
	if (!o->once && isc_http_listen(&h, o->listen, err, sizeof(err)) < 0) {
		fprintf(stderr, "inferscope watch: %s\n", err);
		status = 3;
	} else {
		if (!o->once) {
			fprintf(stderr, "inferscope watch: listening on http://%s/metrics\n",
				h.bound);
		}
		/* what is there already: analysed before the first scrape is answered */
		isc_segdir_rescan(&sd, &ops);
		if (o->once) {
			isc_metrics_write(stdout, w.procs, w.n_procs, &w.self, o->openmetrics);
			status = fflush(stdout) == 0 ? 0 : 3;
		} else {
			status = loop(&w, &sd, &h, stop);
		}
	}
	isc_http_close(&h);
	isc_segdir_close(&sd);
	free(w.procs);
	return status;
}
