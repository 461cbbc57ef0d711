/* SPDX-License-Identifier: MIT */
#include "preload/hooks/host/sampling.h"

#include <string.h>

#define LN2 0.69314718055994530942

uint64_t isc_rand_next(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

uint64_t isc_rand_seed(uint64_t a, uint64_t b)
{
	/* splitmix64 of the mix: distinct threads get unrelated streams */
	uint64_t z = a * 0x9E3779B97F4A7C15ull ^ b;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return z ? z : 0x1234567887654321ull;
}

double isc_ln(double x)
{
	if (!(x > 0)) {
		return -1e308;
	}
	/* x = m * 2^e with m in [1, 2), from the bits of the double */
	uint64_t bits;
	memcpy(&bits, &x, sizeof(bits));
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	if (e == -1023) {
		/* subnormal: scale up first */
		return isc_ln(x * 4503599627370496.0) - 52 * LN2;
	}
	bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
	double m;
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.4142135623730951) {
		m /= 2;
		e++;
	}
	/* ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172 */
	double s = (m - 1) / (m + 1), s2 = s * s, term = s, sum = 0;
	for (int k = 1; k < 40; k += 2) {
		sum += term / k;
		term *= s2;
	}
	return 2 * sum + e * LN2;
}

double isc_exp_neg(double x)
{
	if (!(x >= 0)) {
		return 1;
	}
	if (x > 700) {
		return 0;
	}
	/* x = k ln2 + r with 0 <= r < ln2: exp(-x) = 2^-k exp(-r) */
	int k = (int)(x / LN2);
	double r = x - k * LN2, term = 1, sum = 1;
	for (int i = 1; i < 24; i++) {
		term *= -r / i;
		sum += term;
	}
	while (k >= 60) {
		sum /= 1152921504606846976.0; /* 2^60 */
		k -= 60;
	}
	return sum / (double)(1ull << k);
}

int64_t isc_sample_gap(uint64_t *state, uint64_t mean)
{
	/* 53 random bits -> u in (0, 1] */
	double u = (double)((isc_rand_next(state) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double gap = -isc_ln(u) * (double)mean;
	if (gap > 4e18) {
		gap = 4e18;
	}
	return (int64_t)gap + 1;
}

uint64_t isc_sample_weight(uint64_t n, uint64_t mean)
{
	if (mean == 0 || n == 0) {
		return n;
	}
	double x = (double)n / (double)mean;
	if (x > 40) {
		return n;
	}
	double p = 1 - isc_exp_neg(x);
	if (x < 1e-6) {
		/* 1 - exp(-x) loses digits: n / p = mean (1 + x/2 + ...) */
		return (uint64_t)((double)mean * (1 + x / 2) + 0.5);
	}
	return (uint64_t)((double)n / p + 0.5);
}
