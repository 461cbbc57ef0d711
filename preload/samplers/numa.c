/* SPDX-License-Identifier: MIT */
/*
 * NUMA: the node a thread runs on, and the pages the kernel migrated between nodes
 * while the process ran.
 *
 * A thread's node comes from getcpu() (vDSO on x86-64, tens of nanoseconds), read
 * on the slow paths only: when a host hook attaches the thread and on every
 * recorded memory or system-call event. Page migrations (automatic NUMA balancing)
 * are counted by the kernel per task in /proc/<pid>/task/<tid>/sched
 * (numa_pages_migrated, with CONFIG_NUMA_BALANCING) and system-wide in /proc/vmstat;
 * both are read at start and at the final flush, and the difference becomes one
 * `numa_migration` memory_event plus `trace_metadata.numa`. Where the kernel shows
 * neither, both are left out.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/hooks/host/host.h"
#include "preload/core/threads.h"
#include "preload/core/procfs.h"
#include "common/log.h"

struct migrations {
	bool have_task, have_system;
	uint64_t task; /* sum over the process's live threads */
	uint64_t system;
};

static struct migrations at_start, at_end;
static bool have_end;
static uint64_t start_ns, end_ns;
static int start_node = -1;

int isc_numa_node_now(void)
{
	unsigned cpu, node;
	return getcpu(&cpu, &node) == 0 ? (int)node : -1;
}

/* The number after "key" and a ':' or ' ' in a procfs text; false when absent. */
static bool find_value(const char *path, const char *key, uint64_t *out)
{
	char buf[8192];
	if (isc_slurp(path, buf, sizeof(buf)) == 0) {
		return false;
	}
	size_t klen = strlen(key);
	for (char *p = strstr(buf, key); p; p = strstr(p + 1, key)) {
		if ((p == buf || p[-1] == '\n') && (p[klen] == ' ' || p[klen] == ':')) {
			p += klen;
			while (*p == ' ' || *p == ':' || *p == '\t') {
				p++;
			}
			*out = strtoull(p, NULL, 10);
			return true;
		}
	}
	return false;
}

static void read_migrations(struct migrations *m, bool all_threads)
{
	char path[64];
	uint64_t v;
	memset(m, 0, sizeof(*m));
	m->have_system = find_value("/proc/vmstat", "numa_pages_migrated", &m->system);
	if (!all_threads) {
		m->have_task = find_value("/proc/self/sched", "numa_pages_migrated", &m->task);
		return;
	}
	for (struct isc_thread *t = isc_registry_first(); t; t = t->next) {
		isc_fmt(path, sizeof(path), "/proc/self/task/%u/sched", t->tid);
		if (find_value(path, "numa_pages_migrated", &v)) {
			m->have_task = true;
			m->task += v;
		}
	}
}

/* Final flush (guard raised): one event. It counts as a memory event of the thread
 * (sampled_events), so that it never makes a process look busier than it was
 * (isc_host_events): a process that writes no trace (a shell) records it for nothing. */
static void read_at_end(void *arg)
{
	(void)arg;
	read_migrations(&at_end, true);
}

void isc_numa_flush(void)
{
	end_ns = isc_now();
	/* the flush runs on the program's thread: its procfs reads go where the program
	 * never sees a descriptor of ours (core/threads.h) */
	isc_threads_run_private(read_at_end, NULL);
	have_end = true;
	if (!at_start.have_task || !at_end.have_task) {
		return;
	}
	struct isc_thread *t = isc_thread_self();
	struct isc_event *e = t ? isc_event_reserve(ISC_EV_MEMORY, 1) : NULL;
	if (e == NULL) {
		return;
	}
	memset(e, 0, sizeof(*e));
	/* An instant at the end, not a span over the whole run: a span would make the
	 * analysis window start when the process did, however long it idled first. */
	e->ts = end_ns;
	e->dur = 0;
	e->tid = t->tid;
	e->kind = ISC_EV_MEMORY;
	e->u.memory.op = ISC_MEM_NUMA_MIGRATION;
	e->u.memory.bytes = at_end.task > at_start.task ? at_end.task - at_start.task : 0;
	e->u.memory.numa_node = (int16_t)isc_numa_node_now();
	isc_event_commit(1);
	t->malloc.sampled++;
}

bool isc_numa_report(struct isc_numa_report *r)
{
	struct migrations now = at_end;
	if (!have_end) {
		read_migrations(&now, true); /* a snapshot */
	}
	if (!at_start.have_task && !at_start.have_system) {
		return false;
	}
	r->have_task = at_start.have_task && now.have_task;
	r->task_start = at_start.task;
	r->task_end = now.task;
	r->have_system = at_start.have_system && now.have_system;
	r->system = now.system > at_start.system ? now.system - at_start.system : 0;
	r->start_node = start_node;
	return true;
}

void isc_numa_init(void)
{
	start_ns = isc_now();
	read_migrations(&at_start, false);
	start_node = isc_numa_node_now();
}
