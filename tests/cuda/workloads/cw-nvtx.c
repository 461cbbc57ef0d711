/* SPDX-License-Identifier: MIT */
/*
 * NVTX v3 as frameworks use it (header-only; the headers load the injection named by
 * NVTX_INJECTION64_PATH): push/pop ranges nested inside an annotation-API scope,
 * ASCII and wide names, marks, a domain with a registered string, a start/end range
 * ended by another thread, one left open at exit.
 */
#include <inferscope/inferscope.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void nap_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void *ender(void *arg)
{
	nap_ms(5);
	nvtxRangeEnd(*(nvtxRangeId_t *)arg);
	return NULL;
}

int main(void)
{
	inferscope_range_push("api_outer");
	nvtxRangePushA("nvtx_outer");
	nvtxMarkA("mark_a");
	nvtxRangePushW(L"wide_\u00fc");
	nvtxRangePop();
	nvtxRangePop();
	inferscope_range_pop();

	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "ex_range";
	nvtxRangePushEx(&a);
	nvtxRangePop();

	nvtxDomainHandle_t dom = nvtxDomainCreateA("my_domain");
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = nvtxDomainRegisterStringA(dom, "registered_range");
	nvtxDomainRangePushEx(dom, &a);
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "domain_mark";
	nvtxDomainMarkEx(dom, &a);
	nvtxDomainRangePop(dom);

	nvtxRangeId_t id = nvtxRangeStartA("cross_thread");
	pthread_t t;
	pthread_create(&t, NULL, ender, &id);
	pthread_join(t, NULL);
	nvtxRangeStartA("left_open");
	printf("done\n");
	return 0;
}
