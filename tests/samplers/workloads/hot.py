# SPDX-License-Identifier: MIT
# Known hot functions in a 6:3:1 split of CPU time (thread CPU clock), interleaved in
# slices of random length and order (a fixed seed: a fixed cycle would be sampled at
# the same phases of the kernel's tick every time, see wl-hot.c); "threads" runs each
# in its own thread; "fork" in a forked child while the parent spins in parent_spin().
# With an extension module path, the three functions call into hotext to spin there.
# Usage: python3 hot.py [ms] [threads|fork|ext] [extension dir] (tests expect line 25)
import os
import random
import sys
import threading
import time


def spin(ns):
    end = time.thread_time_ns() + ns
    x = 0
    while time.thread_time_ns() < end:
        for i in range(300):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def hot_six(ns):
    return spin(ns)


def hot_three(ns):
    return spin(ns)


def hot_one(ns):
    return spin(ns)


def parent_spin(ns):
    return spin(ns)


def main():
    ms = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    mode = sys.argv[2] if len(sys.argv) > 2 else "slices"
    if mode == "fork":
        sys.stdout.flush()
        pid = os.fork()
        if pid != 0:
            # the parent computes elsewhere meanwhile: its frames differ from the child's
            while os.waitpid(pid, os.WNOHANG) == (0, 0):
                parent_spin(2000000)
            print("child %d" % pid)
            return
    total = ms * 1000000
    fns = [(hot_six, 6), (hot_three, 3), (hot_one, 1)]
    if mode == "ext":
        sys.path.insert(0, sys.argv[3])
        import hotext
        fns = [(lambda ns: hotext.ext_six(ns), 6), (lambda ns: hotext.ext_three(ns), 3),
               (lambda ns: hotext.ext_one(ns), 1)]
    if mode == "threads":
        def run(fn, share):
            for _ in range(100):
                fn(total * share // 1000)
        ts = [threading.Thread(target=run, args=f) for f in fns]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    else:
        rng = random.Random(12345)
        left = [total * share // 10 for _, share in fns]
        while sum(left) > 0:
            # the function in proportion to what it has left, so that all end together
            pick = rng.randrange(sum(left))
            m = 0 if pick < left[0] else 1 if pick < left[0] + left[1] else 2
            n = min(left[m], rng.randrange(200000, 1800000))  # 0.2-1.8 ms
            fns[m][0](n)
            left[m] -= n
    print("done")
    if mode == "fork":
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
