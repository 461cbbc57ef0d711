/* SPDX-License-Identifier: MIT */
/* Loads an extension module RTLD_LOCAL and runs it. Usage: cw-dlopen MODULE. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cw-dlopen MODULE\n");
		return 2;
	}
	void *m = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	int (*run)(void) = m ? (int (*)(void))dlsym(m, "cw_ext_run") : NULL;
	if (run == NULL) {
		fprintf(stderr, "cw-dlopen: %s\n", dlerror());
		return 1;
	}
	printf("calls=%d\n", run());
	return 0;
}
