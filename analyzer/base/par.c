/* SPDX-License-Identifier: MIT */
#include "analyzer/base/par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define MAX_WORKERS 64

static unsigned par_threads;

void isc_par_set_threads(unsigned n)
{
	par_threads = n;
}

unsigned isc_par_threads(void)
{
	if (par_threads > 0) {
		return par_threads;
	}
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (unsigned)online : 1;
}

struct pool {
	void (*job)(void *arg, size_t i, unsigned worker);
	void *arg;
	size_t n;
	atomic_size_t next;
};

struct worker {
	struct pool *p;
	unsigned id;
};

static void *work(void *x)
{
	struct worker *w = x;
	for (;;) {
		size_t i = atomic_fetch_add(&w->p->next, 1);
		if (i >= w->p->n) {
			return NULL;
		}
		w->p->job(w->p->arg, i, w->id);
	}
}

unsigned isc_par_run(size_t n, unsigned workers, void (*job)(void *arg, size_t i, unsigned worker),
		     void *arg)
{
	unsigned max = isc_par_threads();
	workers = workers < max ? workers : max;
	workers = workers < MAX_WORKERS ? workers : MAX_WORKERS;
	workers = (size_t)workers < n ? workers : (unsigned)n;
	struct pool p = { .job = job, .arg = arg, .n = n };
	atomic_init(&p.next, 0);
	struct worker w[MAX_WORKERS];
	pthread_t th[MAX_WORKERS];
	unsigned started = 1;
	for (; started < workers; started++) {
		w[started] = (struct worker){ &p, started };
		if (pthread_create(&th[started], NULL, work, &w[started]) != 0) {
			break;
		}
	}
	w[0] = (struct worker){ &p, 0 };
	work(&w[0]);
	for (unsigned k = 1; k < started; k++) {
		pthread_join(th[k], NULL);
	}
	return started > 0 ? started : 1;
}
