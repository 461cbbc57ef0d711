"""Real-GPU workload for scripts/gpu-check.sh: a small transformer-like model with
random weights (nothing downloaded), a CPU "tokeniser", pageable input copies and a
sync per step - a typical under-used inference loop.

    model.py [--profile OUT.json]   with --profile, torch.profiler records the same
                                    run and OUT.json gets its kernel count and time
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from inferscope import scope  # noqa: E402

torch.manual_seed(0)
VOCAB, DIM, LAYERS, BATCH, SEQ, STEPS = 32000, 1024, 6, 8, 256, 20


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(DIM)
        self.attn = torch.nn.MultiheadAttention(DIM, 16, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 4 * DIM), torch.nn.GELU(),
                                       torch.nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm(x))


def tokenize(texts):
    # deliberately slow, pure-Python preprocessing, as real tokenisers often are
    out = []
    for t in texts:
        ids = [(hash(w) % (VOCAB - 1)) + 1 for w in t.split()]
        out.append((ids * (SEQ // max(1, len(ids)) + 1))[:SEQ])
    return torch.tensor(out, dtype=torch.long)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile")
    args = ap.parse_args()
    dev = torch.device("cuda")
    emb = torch.nn.Embedding(VOCAB, DIM).to(dev)
    blocks = torch.nn.Sequential(*[Block() for _ in range(LAYERS)]).to(dev).eval()
    head = torch.nn.Linear(DIM, VOCAB).to(dev)
    texts = [" ".join("word%d" % ((i * 7919 + j) % 5000) for j in range(2000))
             for i in range(BATCH)]

    def step():
        with scope("tokenize"):
            ids = tokenize(texts)
        with scope("h2d"):
            ids = ids.to(dev)                      # pageable copy
        with scope("forward"), torch.no_grad():
            logits = head(blocks(emb(ids)))
        with scope("d2h"):
            return logits[:, -1].argmax(-1).cpu()  # sync every step

    for _ in range(3):
        step()                                     # warm-up (cuBLAS handles, autotune)
    torch.cuda.synchronize()
    if args.profile:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(STEPS):
                step()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type.name == "CUDA"
                   and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
        total_us = sum(e.device_time for e in kernels)
        json.dump({"kernels": len(kernels), "kernel_time_us": total_us}, open(args.profile, "w"))
        print("torch.profiler kernels=%d kernel_time_us=%.1f" % (len(kernels), total_us))
    else:
        with scope("measured"):
            t0 = time.perf_counter()
            for _ in range(STEPS):
                step()
            torch.cuda.synchronize()
        print("steps=%d wall_ms=%.1f" % (STEPS, (time.perf_counter() - t0) * 1e3))


if __name__ == "__main__":
    main()
