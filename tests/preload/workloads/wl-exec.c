/* Records, then replaces itself with exec; the new image records too.
 * Usage: wl-exec [phase2|missing] */
#include <inferscope/inferscope.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "phase2") == 0) {
		inferscope_range_push("after_exec");
		inferscope_range_pop();
		printf("phase2 pid %d\n", (int)getpid());
		return 0;
	}
	inferscope_range_push("before_exec");
	inferscope_range_pop();
	printf("phase1 pid %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "missing") == 0) {
		/* a failing exec: the process goes on and its errno is the real one */
		execl("/nonexistent/program", "x", (char *)NULL);
		printf("exec failed errno=%d\n", errno);
		inferscope_range_push("after_failed_exec");
		inferscope_range_pop();
		return 0;
	}
	execl("/proc/self/exe", argv[0], "phase2", (char *)NULL);
	perror("execl");
	return 1;
}
