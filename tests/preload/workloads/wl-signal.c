/* Opens a scope and is terminated by a signal. Usage: wl-signal TERM|KILL|USR2 */
#include <inferscope/inferscope.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *sig = argc > 1 ? argv[1] : "TERM";
	inferscope_range_push("before_signal");
	inferscope_range_pop();
	inferscope_range_push("open_when_killed");
	printf("ready\n");
	fflush(stdout);
	if (strcmp(sig, "USR2") == 0) {
		/* snapshot signal: the process goes on and exits normally */
		kill(getpid(), SIGUSR2);
		for (int i = 0; i < 200; i++) {
			usleep(10000);
		}
		inferscope_range_pop();
		inferscope_range_push("after_snapshot");
		inferscope_range_pop();
		return 0;
	}
	usleep(50000); /* let the collector spill what is recorded */
	kill(getpid(), strcmp(sig, "KILL") == 0 ? SIGKILL : SIGTERM);
	pause();
	return 0;
}
