"""Nested Python scopes, a decorator and a mark; prints a line and exits 0."""
from inferscope import scope, mark, active


@scope("decorated")
def work(n):
    with scope("inner"):
        return sum(range(n))


with scope("outer"):
    total = work(1000)
    mark("done", total=total, label="ok", ratio=0.25)
print("python active=%s total=%d" % (active(), total))
