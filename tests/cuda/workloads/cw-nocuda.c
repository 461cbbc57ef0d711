/* SPDX-License-Identifier: MIT */
/*
 * A program that never uses CUDA, under the preload: says whether any CUDA library
 * got mapped into it (none may be) and what the injection variables hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char line[4096];
	int cuda = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "libcudart") || strstr(line, "libcupti") ||
		    strstr(line, "libcuda.so")) {
			cuda++;
		}
	}
	if (f) {
		fclose(f);
	}
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	const char *nvtx = getenv("NVTX_INJECTION64_PATH");
	printf("cuda_mappings=%d\ninjection=%s\nnvtx=%s\n", cuda, inj ? inj : "", nvtx ? nvtx : "");
	return 0;
}
