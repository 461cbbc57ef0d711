/* Capture control through the API: only "inside" scopes are recorded when the
 * process starts paused (INFERSCOPE_START_PAUSED=1). Also takes a snapshot. */
#include <inferscope/inferscope.h>
#include <stdio.h>

int main(void)
{
	inferscope_range_push("outside_before");
	inferscope_range_pop();
	inferscope_capture_start();
	inferscope_range_push("inside");
	inferscope_range_pop();
	printf("flush=%d\n", inferscope_flush());
	inferscope_capture_stop();
	inferscope_range_push("outside_after");
	inferscope_range_pop();
	return 0;
}
