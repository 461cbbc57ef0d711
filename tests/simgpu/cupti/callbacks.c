/* SPDX-License-Identifier: MIT */
/*
 * The callback API: one subscriber per process (a second one, or any while
 * SIMGPU_CUPTI_HOLDER names another tool, gets
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, as on CUDA <= 13.2), and
 * runtime/driver API enter/exit callbacks with CUpti_CallbackData. The
 * simulator passes no parameter structures (functionParams is NULL). In the
 * resource domain, only the graph node callbacks: GRAPHNODE_CREATED and
 * GRAPHNODE_CLONED, with CUpti_ResourceData and a CUpti_GraphData descriptor,
 * inside the API call that makes the node, on its thread; SIMGPU_CUPTI_NO_RESOURCE
 * makes cuptiEnableCallback refuse the domain (CUPTI_ERROR_NOT_SUPPORTED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "tests/simgpu/cupti/cupti-sim.h"

#define MAX_CBID 1024

struct CUpti_Subscriber_st {
	CUpti_CallbackFunc callback;
	void *userdata;
	uint8_t runtime_on[MAX_CBID / 8];
	uint8_t driver_on[MAX_CBID / 8];
	uint8_t resource_on[MAX_CBID / 8];
};

static struct CUpti_Subscriber_st *_Atomic subscriber;

bool isc_cupti_has_subscriber(void)
{
	return atomic_load_explicit(&subscriber, memory_order_acquire) != NULL;
}

/* cuptiSubscribe_v2 names who holds CUPTI when it refuses. */
static void report_holder(CUpti_SubscriberParams *params)
{
	const char *holder = isc_cupti.holder[0] ? isc_cupti.holder : "CUPTI for another client";

	if (params && params->oldSubscriberName && params->oldSubscriberSize) {
		snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", holder);
	}
}

static CUptiResult subscribe(CUpti_SubscriberHandle *out, CUpti_CallbackFunc callback,
			     void *userdata, CUpti_SubscriberParams *params)
{
	struct CUpti_Subscriber_st *s;
	struct CUpti_Subscriber_st *none = NULL;

	if (!out) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	isc_cupti_setup();
	if (isc_cupti.subscribe_ms) {
		/* the real library initialises here, for tens to hundreds of milliseconds:
		 * long enough for other threads to make calls meanwhile */
		struct timespec ts = { (time_t)(isc_cupti.subscribe_ms / 1000),
				       (long)(isc_cupti.subscribe_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (isc_cupti.holder[0] || isc_cupti_has_subscriber()) {
		report_holder(params);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		return CUPTI_ERROR_OUT_OF_MEMORY;
	}
	s->callback = callback;
	s->userdata = userdata;
	if (!atomic_compare_exchange_strong(&subscriber, &none, s)) {
		free(s);
		report_holder(params);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	*out = s;
	isc_cupti_connect();
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *out, CUpti_CallbackFunc callback,
					void *userdata)
{
	return subscribe(out, callback, userdata, NULL);
}

CUPTI_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *out, CUpti_CallbackFunc callback,
					   void *userdata, CUpti_SubscriberParams *params)
{
	if (params && params->structSize == 0) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return subscribe(out, callback, userdata, params);
}

CUPTI_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle handle)
{
	struct CUpti_Subscriber_st *expected = handle;

	if (!handle || !atomic_compare_exchange_strong(&subscriber, &expected, NULL)) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	/* Not freed: a callback may be running on another thread right now. */
	return CUPTI_SUCCESS;
}

void isc_cupti_unsubscribe_all(void)
{
	atomic_store(&subscriber, NULL);
}

static uint8_t *bits_of(struct CUpti_Subscriber_st *s, CUpti_CallbackDomain domain)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		return s->runtime_on;
	}
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		return s->driver_on;
	}
	if (domain == CUPTI_CB_DOMAIN_RESOURCE && !isc_cupti.refuse_resource) {
		return s->resource_on;
	}
	return NULL;
}

CUPTI_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle handle,
					     CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	uint8_t *bits;

	if (!handle || handle != atomic_load(&subscriber)) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	bits = bits_of(handle, domain);
	if (!bits && domain == CUPTI_CB_DOMAIN_RESOURCE) {
		return CUPTI_ERROR_NOT_SUPPORTED; /* SIMGPU_CUPTI_NO_RESOURCE */
	}
	if (!bits) {
		return CUPTI_SUCCESS; /* domains the simulator never calls back for */
	}
	if (cbid >= MAX_CBID) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	if (enable) {
		bits[cbid / 8] |= (uint8_t)(1u << (cbid % 8));
	} else {
		bits[cbid / 8] &= (uint8_t) ~(1u << (cbid % 8));
	}
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle handle,
					   CUpti_CallbackDomain domain)
{
	uint8_t *bits;

	if (!handle || handle != atomic_load(&subscriber)) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	bits = bits_of(handle, domain);
	if (bits) {
		memset(bits, enable ? 0xff : 0, MAX_CBID / 8);
	}
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle handle)
{
	CUptiResult r = cuptiEnableDomain(enable, handle, CUPTI_CB_DOMAIN_RUNTIME_API);

	return r == CUPTI_SUCCESS ? cuptiEnableDomain(enable, handle, CUPTI_CB_DOMAIN_DRIVER_API)
				  : r;
}

CUPTI_EXPORT CUptiResult cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle handle,
					       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	uint8_t *bits;

	if (!enable || !handle || cbid >= MAX_CBID) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	bits = bits_of(handle, domain);
	*enable = bits ? (bits[cbid / 8] >> (cbid % 8)) & 1u : 0;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					      const char **name)
{
	if (!name ||
	    (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)) {
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	*name = isc_cupti_cbid_name(domain == CUPTI_CB_DOMAIN_DRIVER_API, cbid);
	return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* On the thread making the call, at its entry and exit. */
void isc_cupti_callback(const struct simgpu_api *call, CUpti_ApiCallbackSite site)
{
	struct CUpti_Subscriber_st *s = atomic_load_explicit(&subscriber, memory_order_acquire);
	CUpti_CallbackDomain domain;
	CUpti_CallbackData data;
	uint8_t *bits;

	if (!s) {
		return;
	}
	domain = call->domain == SIMGPU_DOMAIN_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API
						      : CUPTI_CB_DOMAIN_RUNTIME_API;
	bits = bits_of(s, domain);
	if (call->cbid >= MAX_CBID || !((bits[call->cbid / 8] >> (call->cbid % 8)) & 1u)) {
		return;
	}
	memset(&data, 0, sizeof(data));
	data.callbackSite = site;
	data.functionName = call->name;
	data.functionReturnValue = (void *)&call->result;
	data.symbolName = call->symbol;
	data.contextUid = 1;
	data.correlationData = (uint64_t *)&call->tool_data;
	data.correlationId = call->correlation_id;
	s->callback(s->userdata, domain, call->cbid, &data);
}

/* On the thread whose API call made the node, inside that call. */
void isc_cupti_graph_callback(const struct simgpu_graph_node *node)
{
	struct CUpti_Subscriber_st *s = atomic_load_explicit(&subscriber, memory_order_acquire);
	CUpti_CallbackId cbid = node->event == SIMGPU_NODE_CLONED
					? CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED
					: CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED;
	CUpti_ResourceData data;
	CUpti_GraphData graph;

	if (!s || !((s->resource_on[cbid / 8] >> (cbid % 8)) & 1u)) {
		return;
	}
	memset(&graph, 0, sizeof(graph));
	graph.graph = (CUgraph)node->graph;
	graph.originalGraph = (CUgraph)node->original_graph;
	graph.node = (CUgraphNode)node->node;
	graph.originalNode = (CUgraphNode)node->original_node;
	graph.nodeType = (CUgraphNodeType)node->node_type;
	graph.graphExec = (CUgraphExec)node->graph_exec;
	memset(&data, 0, sizeof(data));
	data.resourceDescriptor = &graph;
	s->callback(s->userdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}
