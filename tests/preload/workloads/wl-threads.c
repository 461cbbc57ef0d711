/* Many threads open nested scopes, then exit before the process does: their events
 * must survive them. Usage: wl-threads THREADS SCOPES [pthread_exit]; with pthread_exit
 * the main thread ends first, and the process ends when the last worker does. */
#include <inferscope/inferscope.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int scopes;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < scopes; i++) {
		inferscope_range_push("work");
		inferscope_range_push("step");
		inferscope_range_pop();
		inferscope_range_pop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	scopes = argc > 2 ? atoi(argv[2]) : 1000;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, worker, NULL);
	}
	if (argc > 3 && strcmp(argv[3], "pthread_exit") == 0) {
		printf("main leaves first\n");
		fflush(stdout);
		pthread_exit(NULL);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
	}
	inferscope_range_push("main_after_join");
	inferscope_range_pop();
	printf("threads done\n");
	free(t);
	return 0;
}
