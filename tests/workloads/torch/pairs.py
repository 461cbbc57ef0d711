# SPDX-License-Identifier: MIT
"""Before/after pairs on a real framework (PyTorch, CPU or CUDA): docs/causal-pairs.md,
"Pairs on PyTorch". One training loop, three changes a report can suggest:

  dataloader  a Dataset whose __getitem__ runs a slow Python transform (scope
              `transform`, CPU-time work, no sleeping), loaded with num_workers=0
              ("before": the loop's next(it), scope `next_batch`, runs it) or
              num_workers=2 ("after": the transform runs in two worker processes,
              ahead of the loop)
  sync        the model runs on a second thread (the CPU stand-in for a device stream:
              PyTorch's CPU ops are synchronous, so there is no device to synchronise
              with); the loop hands each step to it and, before, waits for the result
              in the same step (scope `sync`, future.result() and the loss's .item(),
              which on a GPU is a real device sync); after, it keeps the futures and
              waits once after the loop
  slow-op     the model's input goes through a row-by-row normalisation written as a
              Python loop of small operators (scope `slow_norm`); after, the same
              normalisation as one vectorised expression

Every step is inside a scope `step`, named for both recorders: torch.profiler
(record_function) and InferScope (inferscope.scope, a no-op without the preload).

  pairs.py PAIR before|after [--steps N] [--profile OUT.json] [--cuda]

--profile records the run with torch.profiler (export_chrome_trace); --cuda runs the
model on the GPU. The last line printed is JSON: the pair, the variant, the number of
steps, the median step time in ms on the loop's virtual clock (`step_ms`: CPU time,
carried across hand-offs, see VClock) and on the monotonic clock (`wall_ms`); the first
two steps (warm-up) are left out.
"""
import argparse
import concurrent.futures
import contextlib
import json
import statistics
import threading
import time

import torch
import torch.profiler
import torch.utils.data

try:
    from inferscope import scope as isc_scope
except ImportError:  # the helper is not on the path: torch.profiler's scopes only
    isc_scope = None


@contextlib.contextmanager
def region(name):
    """A scope both recorders see."""
    with torch.profiler.record_function(name):
        if isc_scope is None:
            yield
        else:
            with isc_scope(name):
                yield


BATCH, FEATURES = 32, 256
# per pair: the model's hidden width, and the rounds of Python work per sample
# (dataloader) or encoder layers per step (sync); sized so that the change saves a
# third or so of a step, a step taking 10-120 ms of CPU. The DataLoader's batches are 4 x
# larger: what a batch costs to receive from a worker, which no what-if of the "before"
# trace can know, is then a small part of the step.
SIZES = {"dataloader": (512, 3000), "sync": (512, 30), "slow-op": (128, 0)}


class VClock:
    """Virtual time of one thread (one per thread; a forked worker resets its own): the
    thread's CPU time, moved on to another thread's virtual time when it waits for that
    thread's work. A step timed on it takes what it would on a machine with a free core
    for each of the program's threads, whatever else runs on the real one: time spent
    waiting for a CPU does not exist on it, time spent waiting for another thread's work
    is that work's CPU time. (The simulated pairs' virtual host time, docs/causal-pairs.md,
    for one thread; this one carries the clock across hand-offs.)"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.offset = -time.thread_time()

    def now(self):
        return time.thread_time() + self.offset

    def wait_for(self, t):
        """The thread waited for work that ended at virtual time t."""
        self.offset += max(0.0, t - self.now())


clocks = threading.local()


def vclock():
    if not hasattr(clocks, "clock"):
        clocks.clock = VClock()
    return clocks.clock


class StepClock:
    """Each step's time on the thread's virtual clock (`step`, VClock) and on the
    process's monotonic clock (`wall`)."""

    def __init__(self):
        self.times = []

    def start(self):
        self.t0, self.v0 = time.perf_counter(), vclock().now()

    def stop(self):
        self.times.append((vclock().now() - self.v0, time.perf_counter() - self.t0))


def spin(rounds):
    """Python work of a fixed amount (a tokeniser's or an augmentation's kind): its time
    is CPU time, so it stretches with load in both runs alike."""
    acc = 0
    for i in range(rounds):
        acc = (acc * 31 + i) & 0xFFFFFF
    return acc


class SlowTransformDataset(torch.utils.data.Dataset):
    def __init__(self, n, rounds):
        self.n, self.rounds = n, rounds

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        i, requested = index
        vclock().wait_for(requested)  # a worker starts no earlier than it was asked
        with region("transform"):
            g = torch.Generator().manual_seed(i)
            x = torch.randn(FEATURES, generator=g)
            x[0] += spin(self.rounds) * 1e-9
            return x, torch.tensor(i % 10), vclock().now()


class VTimeSampler(torch.utils.data.Sampler):
    """Indices in order, each with the loop's virtual time when the DataLoader asked for
    it (it draws them in the loop's process, when it sends a batch to a worker)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        return ((i, vclock().now()) for i in range(self.n))


def make_model(dev, hidden):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 10)).to(dev)
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def timed_step(requested, model, opt, x, y):
    """train_step on a pool thread: starts no earlier than it was handed over; returns the
    loss and its end on the pool thread's virtual clock."""
    vclock().wait_for(requested)
    loss = train_step(model, opt, x, y)
    return loss, vclock().now()


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


def slow_norm(x):
    """Row by row: one small operator per row and per statistic."""
    rows = []
    for r in x:
        rows.append((r - r.mean()) / (r.std() + 1e-5))
    return torch.stack(rows)


def fast_norm(x):
    return (x - x.mean(dim=1, keepdim=True)) / (x.std(dim=1, keepdim=True) + 1e-5)


def run_dataloader(args, dev, model, opt, clock):
    workers = 0 if args.variant == "before" else 2
    ds = SlowTransformDataset(4 * BATCH * args.steps, args.rounds)
    loader = torch.utils.data.DataLoader(ds, batch_size=4 * BATCH, num_workers=workers,
                                         sampler=VTimeSampler(len(ds)),
                                         worker_init_fn=lambda _: vclock().reset())
    it = iter(loader)
    for _ in range(args.steps):
        clock.start()
        with region("step"):
            with region("next_batch"):
                x, y, ready = next(it)
                vclock().wait_for(float(ready.max()))
            train_step(model, opt, x.to(dev), y.to(dev))
        clock.stop()


def run_sync(args, dev, model, opt, clock):
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    g = torch.Generator().manual_seed(0)
    encoder = torch.randn(FEATURES, FEATURES, generator=g) / FEATURES**0.5
    pending = []
    for _ in range(args.steps):
        clock.start()
        with region("step"):
            with region("prepare"), torch.no_grad():
                x = torch.randn(BATCH, FEATURES, generator=g)
                for _ in range(args.rounds):
                    x = torch.tanh(x @ encoder)
                y = torch.randint(0, 10, (BATCH,), generator=g)
            fut = pool.submit(timed_step, vclock().now(), model, opt, x.to(dev), y.to(dev))
            if args.variant == "before":
                with region("sync"):
                    loss, done = fut.result()
                    loss.item()  # the loss read back: a device sync on a GPU
                    vclock().wait_for(done)
            else:
                pending.append(fut)
        clock.stop()
    with region("drain"):
        for fut in pending:
            fut.result()
    pool.shutdown()


def run_slow_op(args, dev, model, opt, clock):
    g = torch.Generator().manual_seed(0)
    norm = slow_norm if args.variant == "before" else fast_norm
    for _ in range(args.steps):
        clock.start()
        with region("step"):
            x = torch.randn(BATCH * 4, FEATURES, generator=g).to(dev)
            y = torch.randint(0, 10, (BATCH * 4,), generator=g).to(dev)
            with region("slow_norm" if norm is slow_norm else "fast_norm"):
                x = norm(x)
            train_step(model, opt, x, y)
        clock.stop()


PAIRS = {"dataloader": run_dataloader, "sync": run_sync, "slow-op": run_slow_op}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pair", choices=sorted(PAIRS))
    ap.add_argument("variant", choices=["before", "after"])
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=0,
                    help="rounds of Python work per sample (dataloader) or encoder layers "
                    "per step (sync)")
    ap.add_argument("--profile", metavar="OUT.json")
    ap.add_argument("--cuda", action="store_true")
    args = ap.parse_args()
    hidden, rounds = SIZES[args.pair]
    args.rounds = args.rounds or rounds
    torch.set_num_threads(1)
    dev = torch.device("cuda" if args.cuda else "cpu")
    model, opt = make_model(dev, hidden)
    clock = StepClock()
    sync = torch.cuda.synchronize if args.cuda else (lambda: None)
    with contextlib.ExitStack() as stack:
        prof = None
        if args.profile:
            acts = [torch.profiler.ProfilerActivity.CPU]
            if args.cuda:
                acts.append(torch.profiler.ProfilerActivity.CUDA)
            prof = stack.enter_context(torch.profiler.profile(activities=acts))
        PAIRS[args.pair](args, dev, model, opt, clock)
        sync()
    if prof is not None:
        prof.export_chrome_trace(args.profile)
    steady = clock.times[2:] if len(clock.times) > 4 else clock.times
    medians = [round(1e3 * statistics.median(t[k] for t in steady), 3) for k in range(2)]
    print(json.dumps({"pair": args.pair, "variant": args.variant, "steps": len(clock.times),
                      "step_ms": medians[0], "wall_ms": medians[1]}))


if __name__ == "__main__":
    main()
