/* A parent and a fork child, each with its own scopes. Usage: wl-fork exit|_exit|idle
 * ("idle": the child does nothing and exits: it must not write a file). */
#include <inferscope/inferscope.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	inferscope_range_push("parent");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		if (strcmp(mode, "idle") != 0) {
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
