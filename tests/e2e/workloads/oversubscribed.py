# SPDX-License-Identifier: MIT
"""More busy threads than cores (test-host-programs.c): each thread hashes a 1 MiB
buffer ROUNDS times with hashlib, which releases the GIL, so the threads compete for
the CPUs; the main thread hashes too. Prints the threads and the hashes done."""
import hashlib
import os
import sys
import threading

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 4 * (os.cpu_count() or 1)
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 60
BUF = bytes(1 << 20)
done = []
lock = threading.Lock()


def work():
    n = 0
    for _ in range(ROUNDS):
        hashlib.sha256(BUF).digest()
        n += 1
    with lock:
        done.append(n)


threads = [threading.Thread(target=work) for _ in range(THREADS)]
for t in threads:
    t.start()
work()
for t in threads:
    t.join()
print("threads %d hashes %d" % (THREADS + 1, sum(done)))
