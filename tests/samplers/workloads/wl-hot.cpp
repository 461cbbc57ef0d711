// SPDX-License-Identifier: MIT
// Known hot member functions of a C++ class in a 6:3:1 split of CPU time (see wl-hot.c).
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace hot {
static unsigned long cpu_ns()
{
	timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return static_cast<unsigned long>(ts.tv_sec) * 1000000000ul +
	       static_cast<unsigned long>(ts.tv_nsec);
}

struct Spinner {
	volatile unsigned long sink = 1;
	// inlined into each hot function: a tail call would leave it no frame of its own
	__attribute__((always_inline)) inline void spin(unsigned long ns)
	{
		unsigned long end = cpu_ns() + ns, x = sink;
		while (cpu_ns() < end) {
			for (int i = 0; i < 20000; i++) {
				x = x * 6364136223846793005ul + 1442695040888963407ul;
			}
		}
		sink = x;
	}
	__attribute__((noinline)) void hot_six(unsigned long ns) { spin(ns); }
	__attribute__((noinline)) void hot_three(unsigned long ns) { spin(ns); }
	__attribute__((noinline)) void hot_one(unsigned long ns) { spin(ns); }
};
} // namespace hot

int main(int argc, char **argv)
{
	unsigned long ms = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
	unsigned long total = ms * 1000000ul;
	hot::Spinner s;
	for (int i = 0; i < 100; i++) {
		s.hot_six(total * 6 / 1000);
		s.hot_three(total * 3 / 1000);
		s.hot_one(total / 1000);
	}
	std::printf("done %lu\n", s.sink % 10);
	return 0;
}
