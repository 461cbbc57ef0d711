"""Compares an InferScope trace with what the workload measured itself.

    compare.py model TRACE PROFILE.json   kernels and kernel time inside the "measured"
                                          scope vs torch.profiler's run of the same steps
    compare.py copies TRACE STDOUT.txt    kernel count and copy/kernel times vs CUDA events

Prints one line per quantity with both figures and their difference; exits 1 when a
difference is beyond the tolerance (kernel counts exact, times within 5 %).
"""
import json
import re
import sys

TOL = 0.05


def load(path):
    with open(path) as f:
        return json.load(f)


def events(trace, type_=None):
    return [e for e in trace["events"] if type_ is None or e["type"] == type_]


def interval(e):
    s = e.get("timestamp_start_us", e.get("timestamp_us", 0.0))
    return s, s + e.get("duration_us", 0.0)


def report(name, ours, theirs, exact=False):
    diff = 0.0 if theirs == 0 else (ours - theirs) / theirs
    ok = ours == theirs if exact else abs(diff) <= TOL
    print("%-34s inferscope=%-12.1f reference=%-12.1f diff=%+6.2f%%  %s"
          % (name, ours, theirs, diff * 100, "ok" if ok else "MISMATCH"))
    return ok


def model(trace_path, profile_path):
    trace, prof = load(trace_path), load(profile_path)
    win = [e for e in events(trace, "cpu_call") if e["name"] == "measured"]
    if not win:
        print("no 'measured' scope in the trace")
        return False
    a, b = interval(win[0])
    ks = [e for e in events(trace, "gpu_kernel") if a <= interval(e)[0] <= b]
    ok = report("kernels in the measured steps", len(ks), prof["kernels"], exact=True)
    ok &= report("kernel time (us)", sum(e["duration_us"] for e in ks), prof["kernel_time_us"])
    return ok


def copies(trace_path, stdout_path):
    trace = load(trace_path)
    text = open(stdout_path).read()
    ev = dict((k, float(v)) for k, v in re.findall(r"(\w+_ms)=([\d.]+)", text))
    expected = int(re.search(r"expected kernels=(\d+)", text).group(1))
    ks = events(trace, "gpu_kernel")
    ok = report("kernels", len(ks), expected, exact=True)
    h2d = sorted((e for e in events(trace, "h2d_copy")), key=lambda e: interval(e)[0])
    if len(h2d) >= 2:
        # CUDA events bracket a little more than the copy itself: compare loosely
        ok &= report("pageable h2d (ms)", h2d[0]["duration_us"] / 1e3, ev["pageable_h2d_ms"])
        ok &= report("pinned h2d (ms)", h2d[1]["duration_us"] / 1e3, ev["pinned_h2d_ms"])
    add = [e for e in ks if "vector_add" in e["name"]][1:]  # the first is the warm-up
    ok &= report("vector_add x10 (ms)", sum(e["duration_us"] for e in add) / 1e3,
                 ev["vector_add_x10_ms"])
    return ok


if __name__ == "__main__":
    mode, trace, ref = sys.argv[1:4]
    sys.exit(0 if (model if mode == "model" else copies)(trace, ref) else 1)
