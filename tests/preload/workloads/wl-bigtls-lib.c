/* SPDX-License-Identifier: MIT */
/*
 * A library with a large thread-local block, as cuBLAS brings (libcublasLt: 94 KB):
 * loaded at start, its TLS lies in every thread's static TLS, which glibc takes from
 * the stack size a pthread_create asks for.
 */
#include <stddef.h>

__thread char wl_bigtls_block[120 * 1024];

size_t wl_bigtls_touch(size_t i);
size_t wl_bigtls_touch(size_t i)
{
	wl_bigtls_block[i % sizeof(wl_bigtls_block)]++;
	return (size_t)wl_bigtls_block[i % sizeof(wl_bigtls_block)];
}
