/* A parent and a fork child, each with its own scopes. Usage: wl-fork exit|_exit|idle|busy
 * ("idle": the child does nothing and exits: it must not write a file; "busy": the child
 * computes for 200 ms without annotations, as a preprocessing worker does: it must). */
#include <inferscope/inferscope.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	inferscope_range_push("parent");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (strcmp(mode, "busy") == 0) {
			volatile unsigned long x = 0;
			struct timespec t0, t1;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
			do {
				for (int i = 0; i < 100000; i++) {
					x += (unsigned long)i * 2654435761u;
				}
				clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
			} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) <
				 200000000L);
		} else if (strcmp(mode, "idle") != 0) {
			for (int i = 0; i < 5; i++) {
				inferscope_range_push("child");
				inferscope_range_pop();
			}
		}
		printf("child %d\n", (int)getpid());
		fflush(stdout);
		if (strcmp(mode, "_exit") == 0) {
			_exit(7);
		}
		return 7;
	}
	int st = 0;
	waitpid(pid, &st, 0);
	inferscope_range_pop();
	printf("parent saw %d\n", WEXITSTATUS(st));
	return 0;
}
