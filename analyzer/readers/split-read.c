/* SPDX-License-Identifier: MIT */
/*
 * The array of events split into parts, read on threads, merged in order (split-read.h).
 * Merging in order gives the ids of the serial read: strings, threads and kernel shapes
 * are numbered in the order they first appear, and a part's own tables list them in that
 * order.
 *
 * A split is a guess: past an even share of the bytes, the first '{' after "}," that starts
 * a line (the recorder and Kineto write an event a line), else the first after "},". It
 * is verified when the part before it is merged: that part, read from the state its start
 * truly has (the first part starts just after the array's '['), must end between two
 * elements of the array. By induction every merged part started where the serial scanner
 * would stand, so a brace inside a string or a nested array of objects only makes a part
 * fail. From the first part that fails (a wrong split, invalid input, or what the reader
 * reads only in order) the main thread reads on serially, which gives the serial path's
 * messages as well.
 */
#include "analyzer/readers/split-read.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/base/string-table.h"
#include "analyzer/model/model-extra.h"

/* Parts of 8 MiB: about 30 k events each, a few per thread for balance. */
#define DEFAULT_SPLIT (8u << 20)
/* How far past its share a split looks for an event's start before giving up. */
#define SEARCH (1u << 20)
#define MAX_THREADS 256

struct par {
	const struct isc_split_ops *ops;
	void *ctx;
	int fd;			  /* the input's file, read with pread, or -1 */
	const unsigned char *mem; /* or its bytes in memory */
	size_t len;
	struct isc_split_part *parts;
	size_t n_parts;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next; /* the next part a thread takes */
	size_t last; /* parts past it are not read: the array ended, or serial from it */
};

static uint64_t parts_merged;

uint64_t isc_read_parts_merged(void)
{
	return __atomic_load_n(&parts_merged, __ATOMIC_RELAXED);
}

static bool blank(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The first '{' in [from, to) preceded by "}," (blanks between), or SIZE_MAX; line: with
 * a line break before the '{' (a string never holds one: it would be escaped). */
static size_t find_event(const unsigned char *d, size_t from, size_t to, bool line)
{
	for (size_t i = from; i < to; i++) {
		if (d[i] != '{') {
			continue;
		}
		size_t j = i;
		bool broken = false;
		while (j > from && blank(d[j - 1])) {
			broken |= d[--j] == '\n';
		}
		if ((line && !broken) || j <= from || d[j - 1] != ',') {
			continue;
		}
		j--;
		while (j > from && blank(d[j - 1])) {
			j--;
		}
		if (j > from && d[j - 1] == '}') {
			return i;
		}
	}
	return SIZE_MAX;
}

/* Where an event likely starts, from `from` on: writers that put one event on a line
 * give a split that always checks out. */
static size_t next_event(const unsigned char *d, size_t from, size_t to)
{
	size_t s = find_event(d, from, to, true);
	return s != SIZE_MAX ? s : find_event(d, from, to, false);
}

void isc_split_run_part(struct isc_jsax *js, size_t k, int fd, const unsigned char *mem,
			struct isc_split_part *pt)
{
	isc_jscan_enter_array(js->scan, k == 0);
	uint64_t pos = pt->start;
	int ret = isc_jsax_run_at(js, fd, mem, &pos, pt->end);
	pt->closed = ret == 1;
	pt->stop = pos - 1;
	pt->ok = ret == 1 || (ret == 0 && isc_jscan_between_elements(js->scan));
}

struct isc_trace *isc_split_part_trace(const struct isc_read_ctx *rc)
{
	struct isc_trace *t = isc_trace_create();
	for (size_t i = 0; t != NULL && i <= rc->input; i++) {
		if (isc_trace_add_input(t, rc->label) < 0) {
			isc_trace_destroy(t);
			return NULL;
		}
	}
	return t;
}

static void *worker(void *arg)
{
	struct par *p = arg;
	pthread_mutex_lock(&p->mu);
	while (p->next < p->n_parts) {
		size_t k = p->next++;
		bool skip = k > p->last;
		pthread_mutex_unlock(&p->mu);
		if (!skip) {
			p->ops->read(p->ctx, k, p->fd, p->mem, &p->parts[k]);
		}
		pthread_mutex_lock(&p->mu);
		struct isc_split_part *pt = &p->parts[k];
		pt->done = true;
		if (pt->closed && k < p->last) {
			p->last = k;
		}
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

bool isc_split_shapes_fit(const struct isc_trace *mt, const struct isc_trace *wt)
{
	const struct isc_trace_extra *wx = wt->extra, *mx = mt->extra;
	return wx == NULL || (wx->n_geom == 0 &&
			      (mx != NULL ? mx->n_shape : 0) + wx->n_shape < ISC_GEOM_OVERFLOW - 1);
}

int isc_split_map_strings(struct isc_trace *mt, const struct isc_trace *wt,
			  struct isc_split_maps *m)
{
	const struct isc_strtab *ws = wt->str;
	m->str = malloc((ws->n + 1) * sizeof(*m->str));
	if (m->str == NULL) {
		return -ENOMEM;
	}
	m->str[0] = 0;
	for (size_t id = 1; id < ws->n; id++) {
		m->str[id] =
			isc_strtab_intern(mt->str, isc_strtab_get(ws, (uint32_t)id), ws->len[id]);
		if (m->str[id] == UINT32_MAX) {
			return -ENOMEM;
		}
	}
	return 0;
}

int isc_split_map_rest(struct isc_trace *mt, const struct isc_trace *wt, struct isc_split_maps *m)
{
	const struct isc_trace_extra *wx = wt->extra;
	size_t n_shape = wx != NULL ? wx->n_shape : 0;
	m->thread = malloc((wt->n_threads + 1) * sizeof(*m->thread));
	m->geom = malloc((n_shape + 1) * sizeof(*m->geom));
	if (m->thread == NULL || m->geom == NULL) {
		return -ENOMEM;
	}
	for (size_t k = 0; k < wt->n_threads; k++) {
		m->thread[k] = isc_trace_thread(mt, wt->threads[k].input, wt->threads[k].tid);
		if (m->thread[k] == UINT32_MAX) {
			return -ENOMEM;
		}
	}
	m->geom[0] = 0;
	for (size_t i = 0; i < n_shape; i++) {
		struct isc_ev k = { 0 };
		if (isc_trace_add_geom(mt, &k, &wx->shape[i]) < 0) {
			return -ENOMEM;
		}
		m->geom[i + 1] = k.geom;
	}
	return 0;
}

int isc_split_append(struct isc_trace *mt, const struct isc_trace *wt, uint16_t in,
		     const struct isc_split_maps *m)
{
	if (wt->n > 0 && isc_trace_reserve(mt, mt->n + wt->n) < 0) {
		return -ENOMEM;
	}
	/* a part of no event has no array to copy (memcpy from NULL is undefined) */
	struct isc_ev *e = wt->n > 0 ? mt->ev + mt->n : NULL;
	if (wt->n > 0) {
		memcpy(e, wt->ev, wt->n * sizeof(*e));
	}
	for (size_t i = 0; i < wt->n; i++) {
		e[i].name = m->str[e[i].name];
		e[i].thread = e[i].thread == UINT32_MAX ? UINT32_MAX : m->thread[e[i].thread];
		e[i].geom = m->geom[e[i].geom];
	}
	mt->n += wt->n;
	const struct isc_input *wi = &wt->inputs[in];
	struct isc_input *mi = &mt->inputs[in];
	mi->events += wi->events;
	mi->skipped += wi->skipped;
	mi->ignored += wi->ignored;
	return 0;
}

void isc_split_maps_free(struct isc_split_maps *m)
{
	free(m->str);
	free(m->thread);
	free(m->geom);
	memset(m, 0, sizeof(*m));
}

/* Where an event likely starts in [at, at + SEARCH), or SIZE_MAX. */
static size_t split_at(const struct par *p, size_t at, unsigned char *win)
{
	size_t n = p->len - at < SEARCH ? p->len - at : SEARCH;
	const unsigned char *d = p->mem != NULL ? p->mem + at : NULL; /* NULL: read by fd */
	if (p->fd >= 0) {
		ssize_t r = pread(p->fd, win, n, (off_t)at);
		if (r <= 0) {
			return SIZE_MAX;
		}
		n = (size_t)r;
		d = win;
	}
	size_t s = next_event(d, 0, n);
	return s == SIZE_MAX ? s : at + s;
}

/* Bytes [from, len) split into parts of about `split` bytes each, at guessed events. */
static size_t split_parts(struct par *p, size_t from, size_t split)
{
	size_t want = (p->len - from) / split;
	want = want > 4096 ? 4096 : want;
	unsigned char *win = want >= 2 && p->fd >= 0 ? malloc(SEARCH) : NULL;
	p->parts = want >= 2 && (win != NULL || p->fd < 0) ? calloc(want, sizeof(*p->parts)) : NULL;
	if (p->parts == NULL) {
		free(win);
		return 0;
	}
	size_t n = 0, start = from, share = (p->len - from) / want;
	for (size_t k = 1; k < want; k++) {
		size_t at = from + k * share;
		size_t s = at > start ? split_at(p, at, win) : SIZE_MAX;
		if (s != SIZE_MAX) {
			p->parts[n++] = (struct isc_split_part){ .start = start, .end = s };
			start = s;
		}
	}
	free(win);
	p->parts[n++] = (struct isc_split_part){ .start = start, .end = p->len };
	if (n < 2) {
		free(p->parts);
		p->parts = NULL;
		return 0;
	}
	return n;
}

static unsigned thread_count(const struct isc_read_ctx *rc)
{
	long n = rc->threads > 0 ? (long)rc->threads : sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

/*
 * The parts from the array's '[' (data[pos]) on: read, merged while the parts check out.
 * Returns where the main reader goes on (*after_comma: between two elements), or -ENOMEM
 * with diag set.
 */
static ptrdiff_t read_parts(struct par *p, const struct isc_read_ctx *rc, size_t pos,
			    unsigned threads, bool *after_comma)
{
	size_t n_threads = threads < p->n_parts ? threads : p->n_parts;
	pthread_t tid[MAX_THREADS];
	size_t started = 0;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->last = SIZE_MAX;
	for (; started < n_threads; started++) {
		if (pthread_create(&tid[started], NULL, worker, p) != 0) {
			break;
		}
	}
	if (started == 0) {
		worker(p); /* no thread to be had: this one reads the parts */
	}
	ptrdiff_t resume = (ptrdiff_t)pos;
	*after_comma = false;
	int err = 0;
	size_t k = 0;
	for (; k < p->n_parts; k++) {
		struct isc_split_part *pt = &p->parts[k];
		pthread_mutex_lock(&p->mu);
		while (!pt->done) {
			pthread_cond_wait(&p->cv, &p->mu);
		}
		pthread_mutex_unlock(&p->mu);
		int r = pt->ok && pt->state != NULL ? p->ops->merge(p->ctx, pt) : 1;
		p->ops->drop(pt->state);
		pt->state = NULL;
		if (r != 0) {
			err = r < 0 ? r : 0;
			resume = (ptrdiff_t)pt->start;
			*after_comma = k > 0;
			break;
		}
		__atomic_add_fetch(&parts_merged, 1, __ATOMIC_RELAXED);
		if (pt->closed) {
			resume = (ptrdiff_t)pt->stop;
			break;
		}
	}
	if (k == p->n_parts) { /* ended between two elements: the serial read says why */
		resume = (ptrdiff_t)p->len;
		*after_comma = true;
	}
	pthread_mutex_lock(&p->mu);
	p->last = 0;
	p->next = p->n_parts;
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < started; i++) {
		pthread_join(tid[i], NULL);
	}
	for (size_t i = 0; i < p->n_parts; i++) {
		p->ops->drop(p->parts[i].state);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	if (err < 0) {
		isc_diag_set(rc->diag, "%s: out of memory", rc->label);
		return err;
	}
	return resume;
}

/* Whether the input can be read at any offset: memory, or a file of its own, not gzip'd. */
static bool random_access(const struct isc_source *src, struct par *p)
{
	struct stat st;
	p->fd = -1;
	if (src->gz) {
		return false;
	}
	if (src->fd < 0) {
		p->mem = src->mem;
		p->len = src->mem_len;
		return true;
	}
	if (!src->whole_file || fstat(src->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		return false;
	}
	p->fd = src->fd;
	p->len = (size_t)st.st_size;
	return true;
}

int isc_split_read(struct isc_read_ctx *rc, struct isc_jsax *js, const struct isc_split_ops *ops,
		   void *ctx)
{
	unsigned threads = thread_count(rc);
	struct par p = { .ops = ops, .ctx = ctx };
	if (threads < 2 || !random_access(rc->src, &p)) {
		ops->serial(ctx);
		return isc_jsax_run(js, rc->src);
	}
	uint64_t pos = 0;
	int ret = isc_jsax_run_at(js, p.fd, p.mem, &pos, p.len);
	ops->serial(ctx);
	if (ret == 1) {
		p.n_parts = split_parts(&p, pos, rc->split > 0 ? rc->split : DEFAULT_SPLIT);
		bool after_comma = false;
		ptrdiff_t resume = p.n_parts > 0 ? read_parts(&p, rc, pos, threads, &after_comma)
						 : (ptrdiff_t)pos;
		if (resume < 0) {
			ret = (int)resume;
		} else {
			if (after_comma) {
				isc_jscan_after_comma(js->scan);
			}
			pos = (uint64_t)resume;
			ret = isc_jsax_run_at(js, p.fd, p.mem, &pos, p.len);
		}
		free(p.parts);
	}
	if (ret == 0 && isc_jscan_complete(js->scan) != ISC_JSCAN_OK) {
		isc_diag_set(rc->diag, "%s: byte %llu: unexpected end of input (truncated file?)",
			     rc->label, (unsigned long long)js->base);
		ret = -EINVAL;
	}
	return ret;
}
