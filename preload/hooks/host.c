/* SPDX-License-Identifier: MIT */
/*
 * The host family's shared helpers and its first init: stacks, NUMA and the
 * collector's samplers are set up before the malloc and system-call hooks start
 * recording, so that the first sampled event can already carry a stack.
 */
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host.h"
#include "samplers.h"
#include "lifecycle.h"
#include "session.h"

void *isc_host_next(const char *name)
{
	isc_tls_guard++;
	void *p = dlsym(RTLD_NEXT, name);
	isc_tls_guard--;
	return p;
}

void *isc_host_next_v(const char *name, const char *version)
{
	isc_tls_guard++;
	void *p = dlvsym(RTLD_NEXT, name, version);
	if (p == NULL) {
		p = dlsym(RTLD_NEXT, name);
	}
	isc_tls_guard--;
	return p;
}

/* Never after the final flush (capture is off then), never in a vfork child (it
 * shares our memory and must not start threads). */
static void start_collector(void)
{
	if (isc_collector_running() || !isc_session.is_root ||
	    !atomic_load_explicit(&isc_capture.on, memory_order_relaxed) ||
	    syscall(SYS_getpid) != isc_session.pid) {
		return;
	}
	isc_collector_start();
}

struct isc_thread *isc_host_attach(bool may_start)
{
	if (!isc_lifecycle_ready()) {
		return NULL;
	}
	int saved = errno;
	isc_tls_guard++;
	struct isc_thread *t = isc_thread_attach();
	if (t) {
		t->numa_node = isc_numa_node_now() + 1;
	}
	if (may_start) {
		start_collector();
	}
	isc_tls_guard--;
	errno = saved;
	return t;
}

uint64_t isc_host_events(const struct isc_thread *t)
{
	uint64_t n = t->malloc.sampled;
	for (unsigned i = 0; i < ISC_SC__COUNT; i++) {
		n += t->syscalls[i].events;
	}
	return n;
}

/* aggregates.threads[].numa_node: the node a host hook last saw the thread on. */
static void numa_aggregate(struct isc_json *j, const struct isc_thread *t)
{
	if (t->numa_node > 0) {
		isc_json_kv_int(j, "numa_node", t->numa_node - 1);
	}
}

void isc_hooks_host_init(void)
{
	isc_stacks_init();
	isc_samplers_init();
	isc_numa_init();
	isc_cpu_time_init();
	isc_session_add_thread_aggregate(numa_aggregate);
}
