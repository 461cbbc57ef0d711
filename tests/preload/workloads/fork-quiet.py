"""A program with one thread of its own forks while the library's threads run.

Right after fork() the parent must see one thread in /proc/self/stat (CPython >= 3.12
warns on stderr otherwise); a little later the library's threads are back and the
parent's scopes after the forks are recorded. Prints what it saw; exits 0."""
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
from inferscope import scope  # noqa: E402


def threads():
    fd = os.open("/proc/self/stat", os.O_RDONLY)
    line = os.read(fd, 4096).decode()
    os.close(fd)
    return int(line.rsplit(")", 1)[1].split()[17])


def wait_for(cond, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        with scope("idle"):
            time.sleep(0.01)
    return False


with scope("before"):
    pass
print("library threads running", wait_for(lambda: threads() >= 3))
for k in range(3):
    pid = os.fork()
    if pid == 0:
        os._exit(10 + k)
    seen = threads()  # before anything else in the parent
    _, status = os.waitpid(pid, 0)
    print("fork %d: parent saw %d thread(s), child status %d" % (k, seen, os.WEXITSTATUS(status)))
    with scope("after_fork"):
        pass
    print("fork %d: library threads back" % k, wait_for(lambda: threads() >= 3))
# Ends while its threads are away: nothing of theirs (the control socket) is left.
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
