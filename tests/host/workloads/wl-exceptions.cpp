// SPDX-License-Identifier: MIT
// C++ exceptions thrown and caught on several threads: the preload must not take
// over the unwinder (libunwind stays out of the global scope), even with stacks on.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static long work(int id)
{
	long caught = 0;
	for (int i = 0; i < 2000; i++) {
		try {
			std::vector<std::string> v(8, std::string(40, 'a' + id));
			if (i % 2 == 0) {
				throw std::runtime_error("odd one " + std::to_string(i));
			}
			throw i;
		} catch (const std::runtime_error &e) {
			caught += (long)e.what()[0];
		} catch (int k) {
			caught += k % 7;
		}
	}
	return caught;
}

int main()
{
	std::vector<std::thread> threads;
	std::vector<long> results(4);
	for (int i = 0; i < 4; i++) {
		threads.emplace_back([i, &results] { results[i] = work(i); });
	}
	for (auto &t : threads) {
		t.join();
	}
	long total = 0;
	for (long r : results) {
		total += r;
	}
	std::printf("caught total %ld\n", total);
	return 0;
}
