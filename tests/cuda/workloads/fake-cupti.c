/* SPDX-License-Identifier: MIT */
/*
 * A libcupti of another major (CUDA 12.9's CUPTI API version 28), for the test that
 * the library refuses to decode records whose layout it does not know. Only what is
 * looked up before the version check exists, and nothing does anything.
 */
#include <cupti.h>

#define FAKE __attribute__((visibility("default")))

FAKE CUptiResult cuptiGetVersion(uint32_t *version)
{
	*version = 28;
	return CUPTI_SUCCESS;
}

FAKE CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *user)
{
	(void)s;
	(void)cb;
	(void)user;
	return CUPTI_ERROR_NOT_SUPPORTED;
}

FAKE CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						CUpti_BuffersCallbackCompleteFunc done)
{
	(void)req;
	(void)done;
	return CUPTI_ERROR_NOT_SUPPORTED;
}

FAKE CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	(void)kind;
	return CUPTI_ERROR_NOT_SUPPORTED;
}

FAKE CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	return CUPTI_ERROR_NOT_SUPPORTED;
}

FAKE CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
	(void)buffer;
	(void)valid;
	(void)rec;
	return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

FAKE CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
							uint64_t id)
{
	(void)kind;
	(void)id;
	return CUPTI_ERROR_NOT_SUPPORTED;
}

FAKE CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
						       uint64_t *id)
{
	(void)kind;
	(void)id;
	return CUPTI_ERROR_NOT_SUPPORTED;
}
