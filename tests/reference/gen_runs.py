# SPDX-License-Identifier: MIT
"""Random realistic runs for the reference check (tests/reference/check.py), each written
as an InferScope trace and as a Kineto trace of one PyTorch-profiler generation.

A run is simulated, not drawn: a main thread runs steps of operators that launch kernels
onto 1-4 streams; the GPU runs each stream in order, an operation starting after its
launch, its stream and the event it waits for; a saturated launch queue (a few slots)
blocks launch calls until an operation ends; synchronous copies and synchronizes return
with the GPU. Optional per seed: an autograd thread that runs the backward pass while
the main thread's `## backward ##` scope waits; DataLoader workers that decode a batch
while the main thread waits (a pthread_cond_wait in InferScope traces, a scope's self
time in Kineto ones); a poller (cudaEventQuery at a steady period, the NCCL watchdog);
CUDA events ordering two streams (record + stream wait); NCCL all-reduces on their own
stream, waited for by the compute stream; CUDA graph replays (one cudaGraphLaunch, several
kernels); untraced time between steps. Times are whole microseconds, which every
generation writes exactly. Deterministic per seed.
"""
import json
import random

GENS = ("kineto-1.8", "kineto-1.9", "kineto-1.13", "kineto-2.1", "kineto-2.5")
PID, DEV = 4242, 0
MAIN, AUTOGRAD, WORKER, POLLER = 4242, 4251, 4260, 4270


class Run:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.host = []  # dicts: kind scope|op|api|wait, name, tid, ts, dur, ...
        self.gpu = []  # dicts: kind kernel|h2d|d2h|memset, name, stream, ts, dur, corr
        self.syncs = []  # Kineto cuda_sync records of stream waits
        self.links = []  # fwdbwd: (forward op index, backward op index)
        self.corr = 100
        self.handle = 0x7f0000001000
        self.free = {}
        self.ends = []  # ends of every launched operation (the launch queue)
        self.threads = [(MAIN, "python")]


def simulate(seed):
    r = Run(seed)
    rng = r.rng
    n_streams = rng.randint(1, 4)
    streams = [7] + [20 + 4 * i for i in range(n_streams - 1)]
    nccl = n_streams >= 2 and rng.random() < 0.4
    comm = streams[-1] if nccl else None
    compute = [s for s in streams if s != comm]
    events = len(compute) >= 2 and rng.random() < 0.6
    autograd = rng.random() < 0.4
    workers = rng.random() < 0.35
    poller = rng.random() < 0.4
    queue = rng.randint(3, 5) if rng.random() < 0.3 else None
    sync_copy = rng.random() < 0.5
    graphs = rng.random() < 0.3
    for s in streams:
        r.free[s] = 0
    if autograd:
        r.threads.append((AUTOGRAD, "pt_autograd_0"))
    if workers:
        r.threads.append((WORKER, "pt_data_worker"))
    if poller:
        r.threads.append((POLLER, "pt_nccl_watchdog"))

    def host(kind, name, tid, ts, dur, **kw):
        r.host.append(dict(kind=kind, name=name, tid=tid, ts=ts, dur=dur, **kw))
        return len(r.host) - 1

    def in_flight(t):
        return sorted(e for e in r.ends if e > t)

    def launch(tid, t, stream, name, dur, kind="kernel", api="cudaLaunchKernel",
               after=0, nodes=1, blocking=False):
        """A call at t and its operations; returns (call end, last operation's end)."""
        r.corr += 1
        flight = in_flight(t)
        if queue is not None and not blocking and len(flight) >= queue:
            end = flight[len(flight) - queue] + rng.randint(2, 9)
        else:
            end = t + rng.randint(4, 12)
        if blocking:  # a synchronous copy: returns with its operation
            start = max(t + rng.randint(2, 6), r.free[stream], after)
        else:
            start = max(end + rng.randint(1, 6), r.free[stream], after)
        for k in range(nodes):
            d = dur if k == 0 else rng.randint(10, 80)
            r.gpu.append(dict(kind=kind, name=name if k == 0 else name + "_%d" % k,
                              stream=stream, ts=start, dur=d, corr=r.corr))
            r.free[stream] = start + d
            r.ends.append(start + d)
            start += d + rng.randint(1, 3)
        if blocking:
            end = r.free[stream] + rng.randint(3, 15)
        host("api", api, tid, t, end - t, corr=r.corr, stream=stream,
             blocked=blocking)
        return end, r.free[stream]

    def event_wait(tid, t, src, dst):
        """cudaEventRecord on src, cudaStreamWaitEvent on dst: dst's next operation
        waits for src's last. Returns the time after the calls and that end."""
        r.corr += 1
        r.handle += 0x40
        rec = r.corr
        host("api", "cudaEventRecord", tid, t, 3, corr=rec, stream=src, handle=r.handle)
        t += 4 + rng.randint(0, 3)
        r.corr += 1
        host("api", "cudaStreamWaitEvent", tid, t, 3, corr=r.corr, stream=dst,
             handle=r.handle)
        r.syncs.append(dict(ts=t + 1, dur=2, corr=r.corr, stream=dst, on=src, record=rec))
        # the device releases the wait a few microseconds after the marked operation
        return t + 4 + rng.randint(0, 3), r.free[src] + rng.randint(1, 12)

    def op_launch(tid, t, name, stream, dur, after=0, **kw):
        """An operator that launches one kernel; returns (op end, kernel end)."""
        a = rng.randint(2, 20)
        end, kend = launch(tid, t + a, stream, name.split("::")[-1] + "_kernel", dur,
                           after=after, **kw)
        op_end = end + rng.randint(2, 15)
        idx = host("op", name, tid, t, op_end - t)
        return op_end, kend, idx

    t = 1000 + rng.randint(0, 50)
    first = t
    steps = rng.randint(2, 3)
    fwd_ops = []
    for step in range(steps):
        t0 = t
        t += rng.randint(2, 10)
        if workers:
            # the main thread hands the batch over and waits; the worker decodes
            d0 = t + rng.randint(20, 60)
            dlen = rng.randint(300, 1500)
            release = d0 + dlen + rng.randint(5, 60)
            host("scope", "decode", WORKER, d0, dlen)
            host("wait", "pthread_cond_wait", MAIN, t + rng.randint(3, 10), 0,
                 until=release)
            host("scope", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                 MAIN, t, release + 4 - t)
            t = release + 6
        if sync_copy or rng.random() < 0.5:
            end, _, _ = op_launch(MAIN, t, "aten::to", compute[0], rng.randint(20, 200),
                                  kind="h2d", api="cudaMemcpyAsync")
            t = end + rng.randint(2, 20)
        after = 0
        for k in range(rng.randint(2, 4)):
            s = rng.choice(compute)
            if events and k > 0 and rng.random() < 0.6:
                src = rng.choice([x for x in compute if x != s])
                t, after = event_wait(MAIN, t, src, s)
            end, _, idx = op_launch(MAIN, t, "aten::op%d" % k, s, rng.randint(30, 700),
                                    after=after)
            fwd_ops.append(idx)
            after = 0
            t = end + rng.randint(2, 30)
        if graphs:
            end, _ = launch(MAIN, t, compute[0], "graph_kernel", rng.randint(20, 200),
                            api="cudaGraphLaunch", nodes=rng.randint(2, 4))
            t = end + rng.randint(2, 20)
        # backward
        bt = t
        bw_tid = AUTOGRAD if autograd else MAIN
        at = t + (rng.randint(10, 60) if autograd else 0)
        for k in range(rng.randint(2, 3)):
            end, _, idx = op_launch(bw_tid, at, "MmBackward0", rng.choice(compute),
                                    rng.randint(50, 600))
            if fwd_ops:
                r.links.append((fwd_ops[rng.randrange(len(fwd_ops))], idx))
            at = end + rng.randint(2, 10)
        if autograd:
            t = at + rng.randint(5, 40)
            host("scope", "## backward ##", MAIN, bt, t - bt)
        else:
            t = at
        if nccl:
            t, after = event_wait(MAIN, t, compute[0], comm)
            end, _ = launch(MAIN, t, comm, "ncclKernel_AllReduce_RING_LL_Sum_float",
                            rng.randint(200, 1500), after=after)
            t = end + rng.randint(2, 10)
            t, after = event_wait(MAIN, t, comm, compute[0])
            end, _, _ = op_launch(MAIN, t, "Optimizer.step", compute[0],
                                  rng.randint(30, 200), after=after)
            t = end + rng.randint(2, 10)
        # the step's end: a synchronous copy or a synchronize
        if sync_copy:
            end, _ = launch(MAIN, t, compute[0], "Memcpy DtoH (Device -> Pageable)",
                            rng.randint(10, 100), kind="d2h", api="cudaMemcpy",
                            blocking=True)
            t = end
        else:
            last = max(r.free.values())
            dur = max(last, t + 5) + rng.randint(3, 15) - t
            name = "cudaDeviceSynchronize" if rng.random() < 0.5 else "cudaStreamSynchronize"
            host("api", name, MAIN, t, dur, corr=0, stream=-1 if "Device" in name else
                 compute[0], blocked=True)
            t += dur
        host("scope", "ProfilerStep#%d" % step, MAIN, t0, t + 2 - t0)
        t += 2 + (rng.randint(500, 3000) if rng.random() < 0.3 else rng.randint(5, 60))
    if poller:
        span = t - first
        period = max(span // rng.randint(5, 8), 200)
        p = first + rng.randint(0, period // 2)
        while p < t + rng.randint(10, 300):
            host("api", "cudaEventQuery", POLLER, p, 3, corr=0, stream=-1)
            p += period + rng.randint(-period // 20, period // 20)
    return r


# ---------------------------------------------------------------- InferScope


def inferscope(run):
    streams = sorted({g["stream"] for g in run.gpu})
    call_stream = {s: 2 + i for i, s in enumerate(streams)}  # the recorder's numbering
    ev = []

    def add(type_, name, ts, dur, meta):
        ev.append({"id": len(ev), "type": type_, "name": name, "timestamp_start_us": ts,
                   "duration_us": dur, "metadata": meta})

    for h in run.host:
        if h["kind"] in ("scope", "op"):
            add("cpu_call", h["name"], h["ts"], h["dur"],
                {"thread_id": h["tid"], "call_depth": 0, "source": "api"})
        elif h["kind"] == "wait":
            add("cpu_syscall", h["name"], h["ts"], h["until"] - h["ts"],
                {"thread_id": h["tid"], "syscall_number": 202, "fd": -1, "target": "other",
                 "bytes": 0, "return_value": 0, "category": "wait"})
        else:
            meta = {"thread_id": h["tid"], "correlation_id": h.get("corr", 0),
                    "stream_id": call_stream.get(h.get("stream"), -1), "return_code": 0,
                    "blocked": h.get("blocked", False), "source": "interposer"}
            if "handle" in h:
                meta["ptr"] = "0x%x" % h["handle"]
            add("cuda_api", h["name"], h["ts"], h["dur"], meta)
    tid_of = {h["corr"]: h["tid"] for h in run.host if h.get("corr")}
    for g in run.gpu:
        meta = {"thread_id": tid_of[g["corr"]], "correlation_id": g["corr"], "device_id": DEV,
                "stream_id": g["stream"]}
        if g["kind"] == "kernel":
            meta["occupancy"] = 0.5
            add("gpu_kernel", g["name"], g["ts"], g["dur"], meta)
        elif g["kind"] in ("h2d", "d2h"):
            meta.update(bytes=1 << 20, kind="pageable" if g["kind"] == "d2h" else "pinned",
                        throughput_gbps=10.0)
            add(g["kind"] + "_copy", "copy_" + g["kind"], g["ts"], g["dur"], meta)
        else:
            meta.update(bytes=4096, value=0, kind="device", throughput_gbps=10.0)
            add("gpu_memset", "Memset (Device)", g["ts"], g["dur"], meta)
    ev.sort(key=lambda e: e["timestamp_start_us"])
    for i, e in enumerate(ev):
        e["id"] = i
    return {"format_version": "1.0",
            "trace_metadata": {"pid": PID, "cupti_status": "active"}, "events": ev}


# ---------------------------------------------------------------- Kineto

CATS = {
    "kineto-1.8": {"cpu_op": "Operator", "scope": "Operator", "runtime": "Runtime",
                   "kernel": "Kernel", "memcpy": "Memcpy", "memset": "Memset",
                   "launch": "async"},
    "kineto-1.9": {"cpu_op": "cpu_op", "scope": "user_annotation", "runtime": "Runtime",
                   "kernel": "Kernel", "memcpy": "Memcpy", "memset": "Memset",
                   "launch": "async_gpu", "fwdbwd": "forward_backward"},
}
for _g in ("kineto-1.13", "kineto-2.1", "kineto-2.5"):
    CATS[_g] = {"cpu_op": "cpu_op", "scope": "user_annotation", "runtime": "cuda_runtime",
                "kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset",
                "launch": "ac2g", "fwdbwd": "fwdbwd"}
BASE_NS = 900_000  # kineto-2.5 writes times relative to baseTimeNanoseconds


class Frac(float):
    """A time written with three decimals (Kineto since 2024)."""


def kineto(run, gen):
    cats = CATS[gen]
    old = gen == "kineto-1.8"
    new = gen == "kineto-2.5"
    ev = []

    def t(v):
        return Frac(v - BASE_NS // 1000) if new else v

    def tid(v):
        return str(v) if old else v

    def stream_tid(s):
        return "stream %d" % s if old else s

    def ext_key():
        return "external id" if gen in ("kineto-1.8", "kineto-1.9") else "External id"

    def slice_(cat, name, pid, tid_, ts, dur, args):
        ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid_, "ts": t(ts),
                   "dur": Frac(dur) if new else dur, "args": args})

    def flow(ph, cat, name, ident, pid, tid_, ts):
        f = {"ph": ph, "id": ident, "pid": pid, "tid": tid_, "ts": t(ts), "cat": cat,
             "name": name}
        if ph == "f" or gen == "kineto-1.9":
            f["bp"] = "e"
        ev.append(f)

    for th, label in run.threads:
        ev.append({"name": "thread_name", "ph": "M", "ts": t(1000), "pid": PID,
                   "tid": tid(th), "args": {"name": "thread %d (%s)" % (th, label)}})
    linked = {}
    for k, (src, dst) in enumerate(run.links):
        linked.setdefault(src, []).append(("s", k + 1))
        linked.setdefault(dst, []).append(("f", k + 1))
    for i, h in enumerate(run.host):
        if h["kind"] == "wait":
            continue  # Kineto records no waits
        if h["kind"] == "api":
            args = {"cbid": 211, "correlation": h["corr"], ext_key(): 0}
            slice_(cats["runtime"], h["name"], PID, tid(h["tid"]), h["ts"], h["dur"], args)
            if any(g["corr"] == h["corr"] for g in run.gpu):
                flow("s", cats["launch"], "ac2g", h["corr"], PID, tid(h["tid"]), h["ts"])
            continue
        cat = cats["scope"] if h["kind"] == "scope" else cats["cpu_op"]
        slice_(cat, h["name"], PID, tid(h["tid"]), h["ts"], h["dur"], {ext_key(): i + 1})
        for ph, fid in linked.get(i, ()):
            if "fwdbwd" in cats:
                flow(ph, cats["fwdbwd"], "fwdbwd", fid, PID, tid(h["tid"]), h["ts"])
    for g in run.gpu:
        args = {"device": DEV, "context": 1, "stream": g["stream"], "correlation": g["corr"],
                ext_key(): 0}
        if g["kind"] == "kernel":
            cat, name = cats["kernel"], g["name"]
            args.update({"registers per thread": 32, "shared memory": 0,
                         "grid": [54, 1, 1], "block": [256, 1, 1]})
        elif g["kind"] == "memset":
            cat, name = cats["memset"], "Memset (Device)"
            args["bytes"] = 4096
        else:
            cat = cats["memcpy"]
            name = ("Memcpy HtoD (Pinned -> Device)" if g["kind"] == "h2d"
                    else "Memcpy DtoH (Device -> Pageable)")
            args["bytes"] = 1 << 20
        slice_(cat, name, DEV, stream_tid(g["stream"]), g["ts"], g["dur"], args)
        flow("f", cats["launch"], "ac2g", g["corr"], DEV, stream_tid(g["stream"]), g["ts"])
    if gen in ("kineto-2.1", "kineto-2.5"):
        # cuda_sync records of the stream waits; the record's correlation from 2.2 on
        for s in run.syncs:
            args = {"cuda_sync_kind": "Stream Wait Event", "stream": s["stream"],
                    "correlation": s["corr"], "device": DEV, "context": 1,
                    "wait_on_stream": s["on"], "wait_on_cuda_event_id": 1,
                    "wait_on_cuda_event_record_corr_id": s["record"] if new else -1}
            slice_("cuda_sync", "Stream Wait Event", DEV, s["stream"], s["ts"], s["dur"],
                   args)
    lo = min(h["ts"] for h in run.host)
    hi = max([h["ts"] + h["dur"] for h in run.host] + [g["ts"] + g["dur"] for g in run.gpu])
    slice_("Trace", "PyTorch Profiler (0)", "Traces" if old else "Spans", "PyTorch Profiler",
           lo, hi - lo, {"Op count": 0})
    doc = {"schemaVersion": 1}
    if not old:
        doc["deviceProperties"] = [{"id": 0, "name": "NVIDIA A100-SXM4-40GB",
                                    "totalGlobalMem": 42505273344, "computeMajor": 8,
                                    "computeMinor": 0, "numSms": 108}]
    if gen == "kineto-2.1":
        doc["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": 1}
    if new:
        doc["displayTimeUnit"] = "ms"
        doc["baseTimeNanoseconds"] = BASE_NS
    doc["traceEvents"] = ev
    return doc


def dumps(doc):
    def fix(o):
        if isinstance(o, Frac):
            return "@%d.%03d@" % (int(o), round((o - int(o)) * 1000))
        if isinstance(o, dict):
            return {k: fix(v) for k, v in o.items()}
        if isinstance(o, list):
            return [fix(v) for v in o]
        return o
    text = json.dumps(fix(doc), separators=(",", ":"))
    return text.replace('"@', "").replace('@"', "") + "\n"


def write(seed, directory):
    """Writes the seed's run as InferScope and as one Kineto generation (by seed);
    returns the two paths."""
    import os
    run = simulate(seed)
    gen = GENS[seed % len(GENS)]
    paths = []
    for name, doc in (("run-%d.inferscope.json" % seed, inferscope(run)),
                      ("run-%d.%s.json" % (seed, gen), kineto(run, gen))):
        p = os.path.join(directory, name)
        with open(p, "w") as f:
            f.write(dumps(doc))
        paths.append(p)
    return paths
