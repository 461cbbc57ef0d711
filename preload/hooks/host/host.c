/* SPDX-License-Identifier: MIT */
/*
 * The host family's shared helpers and its first init: stacks, NUMA and the
 * collector's samplers are set up before the malloc and system-call hooks start
 * recording, so that the first sampled event can already carry a stack.
 */
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/hooks/host/host.h"

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

struct isc_thread *isc_host_attach(bool may_start)
{
	if (!isc_core_ready()) {
		return NULL;
	}
	int saved = errno;
	isc_tls_guard++;
	struct isc_thread *t = isc_thread_attach();
	if (t) {
		t->numa_node = isc_numa_node_now() + 1;
	}
	if (may_start) {
		isc_collector_start_eager();
	}
	isc_tls_guard--;
	errno = saved;
	return t;
}

void isc_host_resume_collector(void)
{
	isc_tls_guard++;
	isc_collector_resume_due();
	isc_tls_guard--;
}

uint64_t isc_host_events(const struct isc_thread *t)
{
	uint64_t n = t->malloc.sampled;
	for (unsigned i = 0; i < ISC_SC__COUNT; i++) {
		n += t->syscalls[i].events;
	}
	return n;
}
