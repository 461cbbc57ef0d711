/* SPDX-License-Identifier: MIT */
/*
 * The interface of libwlext.so, the Python workloads' extension (see wlext.c and
 * wlcommon.py, which declares the same functions for ctypes).
 */
#ifndef WL_WLEXT_H
#define WL_WLEXT_H

#include <stddef.h>

#define WLX_EXPORT __attribute__((visibility("default")))

WLX_EXPORT const char *wlx_error_name(int err);
WLX_EXPORT const char *wlx_error_string(int err);
WLX_EXPORT int wlx_init(void);
WLX_EXPORT int wlx_kernel(const char *name, unsigned long long duration_ns);
WLX_EXPORT int wlx_stream_create(int non_blocking);
WLX_EXPORT int wlx_launch(int kernel, unsigned grid, unsigned block, int stream);
WLX_EXPORT int wlx_host_alloc(size_t bytes, int pinned);
WLX_EXPORT int wlx_device_alloc(size_t bytes);
WLX_EXPORT int wlx_device_free(int buf);
WLX_EXPORT int wlx_copy(int direction, int host, int dev, size_t bytes, int async, int stream);
WLX_EXPORT int wlx_stream_sync(int stream);
WLX_EXPORT int wlx_device_sync(void);
WLX_EXPORT int wlx_event_create(void);
WLX_EXPORT int wlx_event_record(int event, int stream);
WLX_EXPORT int wlx_event_sync(int event);

#endif /* WL_WLEXT_H */
