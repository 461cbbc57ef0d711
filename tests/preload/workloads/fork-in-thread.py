"""A child forked from a thread other than the main one ends when that thread's
function returns (its only thread ends, as in CPython's test_threading). The parent
prints the child's exit status, or that it was still running after 20 s."""
import os
import sys
import threading
import time


def work():
    pid = os.fork()
    if pid == 0:
        print("child", threading.current_thread().name)
        sys.stdout.flush()
        return
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print("child status", os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status)
            return
        time.sleep(0.01)
    print("child still running")
    os.kill(pid, 9)
    os.waitpid(pid, 0)


t = threading.Thread(target=work)
t.start()
t.join()
