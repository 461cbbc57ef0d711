/* SPDX-License-Identifier: MIT */
/* A fixed amount of CPU work (no allocation, no system call in the loop): the
 * sampler's overhead is the extra CPU time a run of it takes. */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) unsigned long mix(unsigned long x, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		x ^= x >> 29;
	}
	return x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	unsigned long x = 1;
	for (unsigned long k = 0; k < n; k++) {
		x = mix(x, 1000000);
	}
	printf("%lu\n", x & 0xff);
	return 0;
}
