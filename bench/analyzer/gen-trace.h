/* SPDX-License-Identifier: MIT */
/* The benchmark trace generator's Kineto writer (gen-trace-kineto.c). */
#ifndef ISC_BENCH_GEN_TRACE_H
#define ISC_BENCH_GEN_TRACE_H

#include <stdint.h>

/* Writes a Kineto trace of about n trace events to stdout. */
void isc_bench_kineto(uint64_t n);

#endif /* ISC_BENCH_GEN_TRACE_H */
