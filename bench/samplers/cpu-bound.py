# SPDX-License-Identifier: MIT
# A fixed amount of pure-Python CPU work, six frames deep.
import sys


def leaf(n):
    x = 1
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def f5(n): return leaf(n)
def f4(n): return f5(n)
def f3(n): return f4(n)
def f2(n): return f3(n)
def f1(n): return f2(n)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
s = 0
for _ in range(n):
    s += f1(100000)
print(s & 0xff)
