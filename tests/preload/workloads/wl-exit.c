/* Writes to stdout and stderr and exits with a status. Usage: wl-exit STATUS [_exit] */
#include <inferscope/inferscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 0;
	inferscope_range_push("main");
	printf("hello from wl-exit\n");
	fprintf(stderr, "stderr line\n");
	inferscope_mark("about_to_exit");
	if (argc > 2 && strcmp(argv[2], "_exit") == 0) {
		fflush(stdout);
		_exit(status);
	}
	return status;
}
