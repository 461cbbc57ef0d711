# SPDX-License-Identifier: MIT
"""Writes real PyTorch-profiler Chrome traces of a small CPU model into DIR, for
tests/analyzer/test-kineto-gens.c: DIR/profiler.json (torch.profiler's
export_chrome_trace) and DIR/autograd.json (torch.autograd.profiler's), and prints for
each "NAME COMPLETE THREADS": the complete events ("ph": "X") of the kinds the analyzer
models that it holds, and their distinct thread ids, which the analyzer must read back. Usage: torch-chrome-trace.py DIR
"""
import json
import os
import sys

import torch
import torch.autograd.profiler
import torch.profiler

# The categories the analyzer models as events (a Kineto build writes them; the legacy
# export writes none)
MODELLED = {None, "cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "kernel",
            "gpu_memcpy", "gpu_memset", "cuda_sync"}


def model_step(model, x):
    model(x).sum().backward()


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(2):
            with torch.profiler.record_function("step"):
                model_step(model, x)
            prof.step()
    prof.export_chrome_trace(os.path.join(out, "profiler.json"))
    with torch.autograd.profiler.profile() as prof:
        model_step(model, x)
    prof.export_chrome_trace(os.path.join(out, "autograd.json"))
    for name in ("profiler", "autograd"):
        with open(os.path.join(out, name + ".json")) as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        complete = [e for e in events if e.get("ph") == "X" and e.get("cat") in MODELLED]
        print(name, len(complete), len({str(e.get("tid")) for e in complete}))


if __name__ == "__main__":
    main()
