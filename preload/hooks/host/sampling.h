/* SPDX-License-Identifier: MIT */
/*
 * Poisson byte sampling, as heap profilers do it (tcmalloc, heaptrack's sampling
 * mode): every allocated byte has the same chance 1/mean of being "the sampled
 * byte", so the gap between two sampled bytes is exponential with that mean. A
 * thread keeps a countdown of bytes to the next sample; the allocation that takes
 * it below zero is recorded and stands for n / (1 - exp(-n / mean)) bytes, which
 * makes the sum of weights an unbiased estimate of the bytes allocated.
 *
 * The preload links libc only (no libm), and these run inside malloc hooks: the
 * logarithm and exponential below are small, allocation-free and accurate to about
 * 1e-12 relative, which is far below the sampling noise.
 */
#ifndef ISC_SAMPLING_H
#define ISC_SAMPLING_H

#include <stdint.h>

/* xorshift64*: state must be non-zero. */
uint64_t isc_rand_next(uint64_t *state);
uint64_t isc_rand_seed(uint64_t a, uint64_t b);

/* Natural logarithm of x > 0; exp(-x) for x >= 0. */
double isc_ln(double x);
double isc_exp_neg(double x);

/* Bytes to the next sample: exponential with the given mean (at least 1). */
int64_t isc_sample_gap(uint64_t *state, uint64_t mean);

/* What a sampled allocation of n bytes stands for (n when mean is 0). */
uint64_t isc_sample_weight(uint64_t n, uint64_t mean);

#endif /* ISC_SAMPLING_H */
