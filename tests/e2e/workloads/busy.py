# SPDX-License-Identifier: MIT
"""Pure-Python computing for a fixed number of iterations; prints its pid and the count."""
import os
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000000
x = 0
for i in range(N):
    x = (x * 31 + i) % 1000003
print("pid %d iterations %d" % (os.getpid(), N))
