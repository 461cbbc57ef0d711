/*
 * Loads the library given as argv[1] with dlopen (a set-user-ID program ignores
 * LD_PRELOAD paths: this is how the library enters one in a test), does a little work
 * and exits 0. Prints "loaded" once the library's constructor has run.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2 || dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) == NULL) {
		fprintf(stderr, "wl-dlopen: %s\n", argc < 2 ? "no library given" : dlerror());
		return 2;
	}
	for (int i = 0; i < 100; i++) {
		usleep(100);
	}
	printf("loaded\n");
	return 0;
}
