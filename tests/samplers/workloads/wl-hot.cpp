// SPDX-License-Identifier: MIT
// Known hot member functions of a C++ class in a 6:3:1 split of CPU time, in slices of
// random length and order (see wl-hot.c for why).
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace hot
{
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
	__attribute__((noinline)) void hot_six(unsigned long ns)
	{
		spin(ns);
	}
	__attribute__((noinline)) void hot_three(unsigned long ns)
	{
		spin(ns);
	}
	__attribute__((noinline)) void hot_one(unsigned long ns)
	{
		spin(ns);
	}
};
} // namespace hot

int main(int argc, char **argv)
{
	unsigned long ms = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
	unsigned long total = ms * 1000000ul;
	hot::Spinner s;
	unsigned long left[3] = { total * 6 / 10, total * 3 / 10, total / 10 };
	unsigned long long rng = 0x9e3779b97f4a7c15ull;
	while (left[0] + left[1] + left[2] > 0) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		unsigned long pick = rng % (left[0] + left[1] + left[2]);
		int m = pick < left[0] ? 0 : pick < left[0] + left[1] ? 1 : 2;
		unsigned long len = 200000 + (rng >> 24) % 1600000; // 0.2-1.8 ms
		len = len < left[m] ? len : left[m];
		if (m == 0) {
			s.hot_six(len);
		} else if (m == 1) {
			s.hot_three(len);
		} else {
			s.hot_one(len);
		}
		left[m] -= len;
	}
	std::printf("done %lu\n", s.sink % 10);
	return 0;
}
