# SPDX-License-Identifier: MIT
"""A second, deliberately plain implementation of the replay semantics of docs/rules.md
("The dependency graph and its critical path", "What-if questions"): it reads an
InferScope or a Kineto trace itself, builds the run's dependency graph, walks its
critical path and re-times it under a change. It shares no code with analyzer/causal/:
plain lists and dicts, one pass per rule, written from the documented rules, so that
tests/reference/check.py can hold the C engine to them on generated runs.

Times are integer nanoseconds. Only what the documented rules read is modelled.
"""
import gzip
import json

# Thresholds the rules compare (docs/rules.md, "Thresholds"); check.py passes overrides.
DEFAULTS = {"launch.runtime_cutoff_us": 50.0, "launch.queue_full_depth": 64.0}
HANDOFF_NS = 150000
KINETO_ROUNDING_NS = 1000
INFER_GAP_NS, INFER_SLACK_NS = 50000, 30000  # stream waits told from order (Kineto)

HOST_KINDS = ("scope", "op", "api", "syscall")
GPU_KINDS = ("kernel", "h2d", "d2h", "d2d", "memset")

CATEGORIES = ("kernel", "communication", "h2d_copy", "d2h_copy", "gpu_other", "gpu_gap",
              "launch_latency", "host_compute", "cuda_runtime", "sync_return", "blocked",
              "io_wait", "host_wait", "untraced", "stream_wait", "comm_wait")


class Event:
    """One timed record: kind is a HOST_KINDS or GPU_KINDS entry, or "sync" (a Kineto
    cuda_sync record)."""

    def __init__(self, kind, name, ts, dur, **kw):
        self.kind, self.name, self.ts, self.dur = kind, name, ts, max(dur, 0)
        self.tid = kw.get("tid")
        self.corr = kw.get("corr", 0)
        self.stream = kw.get("stream", -1)
        self.device = kw.get("device", 0)
        self.handle = kw.get("handle", 0)
        self.blocked = kw.get("blocked", False)
        self.sys = kw.get("sys", "")
        self.sync_kind = kw.get("sync_kind", "")
        self.wait_stream = kw.get("wait_stream", -1)
        self.record_corr = kw.get("record_corr", 0)
        self.order = 0

    @property
    def end(self):
        return self.ts + self.dur


# ---------------------------------------------------------------- reading


def _us(v):
    return int(round(float(v) * 1000))


def _load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def read_inferscope(doc):
    kinds = {"cpu_call": "scope", "cuda_api": "api", "cpu_syscall": "syscall",
             "gpu_kernel": "kernel", "h2d_copy": "h2d", "d2h_copy": "d2h",
             "d2d_copy": "d2d", "gpu_memset": "memset"}
    out = []
    for e in doc["events"]:
        kind = kinds.get(e.get("type"))
        if kind is None:
            continue
        m = e.get("metadata", {})
        ptr = m.get("ptr")
        out.append(Event(kind, e["name"], _us(e["timestamp_start_us"]),
                         _us(e.get("duration_us", 0)), tid=m.get("thread_id"),
                         corr=m.get("correlation_id", 0) or 0,
                         stream=m.get("stream_id", -1), device=m.get("device_id", 0),
                         handle=int(ptr, 16) if isinstance(ptr, str) else 0,
                         blocked=bool(m.get("blocked", False)), sys=m.get("category", "")))
    return out


def _int(v):
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    return None


FWDBWD_CATS = ("fwdbwd", "forward_backward")


def read_kineto(doc):
    """The events, and the fwdbwd flows as (forward event, backward event) pairs: a flow's
    ends bind to the slice of their thread that starts at their time."""
    cats = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "copy", "Memcpy": "copy",
            "gpu_memset": "memset", "Memset": "memset", "cuda_runtime": "api",
            "Runtime": "api", "cuda_driver": "api", "cpu_op": "op", "Operator": "op",
            "user_annotation": "scope", "cuda_sync": "sync"}
    base = doc.get("baseTimeNanoseconds")
    out = []
    at = {}  # (tid, ts) -> the host slice starting there
    ends = {}  # flow id -> {"s": (tid, ts), "f": (tid, ts)}
    for e in doc["traceEvents"]:
        if e.get("cat") in FWDBWD_CATS and e.get("ph") in ("s", "f"):
            ts = _us(e["ts"]) + (base or 0)
            ends.setdefault(e.get("id"), {})[e["ph"]] = (_int(e.get("tid")), ts)
            continue
        kind = cats.get(e.get("cat"))
        if e.get("ph") != "X" or kind is None or _int(e.get("pid")) is None:
            continue
        ts = _us(e["ts"]) + (base or 0)
        a = e.get("args", {})
        if kind == "copy":
            n = e["name"]
            kind = "h2d" if "HtoD" in n else "d2h" if "DtoH" in n else "d2d"
        if kind in GPU_KINDS or kind == "sync":
            out.append(Event(kind, e["name"], ts, _us(e.get("dur", 0)),
                             corr=a.get("correlation", 0), stream=a.get("stream", -1),
                             device=a.get("device", 0),
                             sync_kind=e["name"] if kind == "sync" else "",
                             wait_stream=a.get("wait_on_stream", -1),
                             record_corr=max(a.get("wait_on_cuda_event_record_corr_id", 0),
                                             0)))
            continue
        n = e["name"]
        blocked = kind == "api" and ("Synchronize" in n or (n.startswith("cudaMemcpy")
                                                             and "Async" not in n))
        out.append(Event(kind, n, ts, _us(e.get("dur", 0)), tid=_int(e["tid"]),
                         corr=a.get("correlation", 0) if kind == "api" else 0,
                         blocked=blocked))
        at.setdefault((out[-1].tid, ts), out[-1])
    links = []
    for v in ends.values():
        if "s" in v and "f" in v and v["s"] in at and v["f"] in at:
            links.append((at[v["s"]], at[v["f"]]))
    return out, links


def read(path):
    doc = _load(path)
    if isinstance(doc, dict) and "traceEvents" in doc:
        events, links = read_kineto(doc)
        return events, links, True
    return read_inferscope(doc), [], False


# ---------------------------------------------------------------- model


def api_class(n):
    if ("LaunchKernel" in n or n.startswith("cudaGraphLaunch") or n.startswith("cuLaunch")):
        return "launch"
    if n.startswith("cudaMemcpy"):
        return "memcpy"
    if n.startswith("cudaMemset"):
        return "memset"
    if "Synchronize" in n or n.startswith("cudaStreamWaitEvent"):
        return "sync"
    return "other"


def event_call(n):
    if n.startswith("cudaEventRecord"):
        return "record"
    if n.startswith("cudaStreamWaitEvent"):
        return "wait"
    if n.startswith("cudaEventSynchronize"):
        return "sync"
    return ""


def is_comm(name):
    return "nccl" in name or "gloo" in name


class Node:
    def __init__(self, ev, t0, t1, lane, gpu):
        self.ev, self.t0, self.t1, self.lane, self.gpu = ev, t0, t1, lane, gpu
        self.seq = self.dep = self.xdep = None
        self.last = self.wait = self.handoff = self.woken = False
        self.idle = self.poll = self.blocking = False
        self.block = ""  # "sync", "copy", "qfull" while the wait rules decide
        self.infer = False


class Graph:
    """The graph of one trace (docs/rules.md), its critical path and its what-ifs."""

    def __init__(self, events, kineto, thresholds=None, links=()):
        th = dict(DEFAULTS)
        th.update(thresholds or {})
        self.th = th
        self.kineto = kineto
        # backward operators another thread ran for a thread's forward (fwdbwd flows)
        self.backwards = [(f.tid, b.tid, b.ts) for f, b in links if f.tid != b.tid]
        # the model's order: stable by start
        self.ev = sorted(events, key=lambda e: e.ts)
        for i, e in enumerate(self.ev):
            e.order = i
        # the window: the first to the last timed record
        self.ws = min(e.ts for e in self.ev)
        self.we = max(e.end for e in self.ev)
        self.api_by_corr = {}
        for e in self.ev:
            if e.kind == "api" and e.corr and e.corr not in self.api_by_corr:
                self.api_by_corr[e.corr] = e
        self.nodes = []
        self.last_seg = {}
        self.handoffs = 0
        self.wakes = 0
        self.max_depth = 0
        self._host()
        self._gpu()
        self.sync_src = {}  # cudaEventSynchronize call -> the operation its record marked
        if kineto:
            self._kineto_events()
            self._kineto_inferred_waits()
        else:
            self._events()
        self._waits()
        self._threads()
        self._order()
        self._latency()
        self.end = self.ws
        for n in self.nodes:
            if self.ends_run(n):
                self.end = max(self.end, n.t1)

    # ------------------------------------------------------------ nodes

    def _host(self):
        threads = []
        per = {}
        for e in self.ev:
            if e.kind in HOST_KINDS:
                if e.tid not in per:
                    per[e.tid] = []
                    threads.append(e.tid)
                per[e.tid].append(e)
        rank = {"scope": 0, "op": 1, "api": 2}
        for lane, tid in enumerate(threads):
            evs = per[tid]
            # equal starts: the longer first, then scope, operator, call
            evs.sort(key=lambda e: (e.ts, -e.dur, rank.get(e.kind, 3), e.order))
            keep, api_end = [], None
            for i, e in enumerate(evs):
                if e.kind == "api":
                    api_end = e.end if api_end is None else max(api_end, e.end)
                if e.kind == "syscall":
                    inside = api_end is not None and e.ts < api_end
                    for x in evs[i + 1:i + 3]:
                        if inside:
                            break
                        ov = min(e.end, x.end) - max(e.ts, x.ts)
                        inside = x.kind == "api" and e.dur > 0 and 2 * max(ov, 0) >= e.dur
                    if inside:
                        continue
                keep.append(e)
            self._cut(keep, lane)

    def _emit(self, owner, s, e, lane, prev):
        n = Node(owner, s, e, lane, False)
        n.seq = prev
        n.idle = owner.kind == "syscall" and owner.sys in ("wait", "sleep")
        self.nodes.append(n)
        return n

    def _cut(self, evs, lane):
        stack = []  # [event, end, nodes when pushed]
        cur = None
        prev = None

        def close():
            nonlocal cur, prev
            ev, end, count = stack.pop()
            if end > cur or (len(self.nodes) == count and ev.kind == "api"):
                prev = self._emit(ev, cur, max(end, cur), lane, prev)
            if prev is not None and len(self.nodes) > count:
                self.last_seg[id(ev)] = prev
                prev.last = True
            cur = max(cur, end)

        for e in evs:
            while stack and stack[-1][1] <= e.ts:
                close()
            if stack and e.ts > cur:
                prev = self._emit(stack[-1][0], cur, e.ts, lane, prev)
            end = e.end
            if stack and end > stack[-1][1]:
                end = stack[-1][1]
            cur = e.ts if cur is None else max(cur, e.ts)
            stack.append([e, end, len(self.nodes)])
        while stack:
            close()

    def _gpu(self):
        lanes = {}
        nlanes = len({n.lane for n in self.nodes})
        self.host_count = len(self.nodes)
        for e in self.ev:
            if e.kind not in GPU_KINDS:
                continue
            key = (e.device, e.stream)
            if key not in lanes:
                lanes[key] = [nlanes + len(lanes), None]
            n = Node(e, e.ts, e.end, lanes[key][0], True)
            n.seq = lanes[key][1]
            lanes[key][1] = n
            api = self.api_by_corr.get(e.corr) if e.corr else None
            if api is not None:
                s = self.last_seg.get(id(api))
                # started before its call returned: it waits for the call's start
                while s is not None and e.ts < api.end and s.t0 >= api.ts:
                    s = s.seq
                n.dep = s
            self.nodes.append(n)
        self.gpu_nodes = self.nodes[self.host_count:]

    # ------------------------------------------------------------ event edges

    def _events(self):
        """cudaEventRecord / cudaStreamWaitEvent / cudaEventSynchronize by handle."""
        wanted = any(e.kind == "api" and e.handle and event_call(e.name) in ("wait", "sync")
                     for e in self.ev)
        if not wanted:
            return
        ops_of = {}
        for n in self.gpu_nodes:
            api = self.api_by_corr.get(n.ev.corr) if n.ev.corr else None
            if api is not None and api.stream >= 0:
                ops_of.setdefault(id(api), []).append(n)
        last, pend, mark = {}, {}, {}
        for e in self.ev:
            if e.kind != "api":
                continue
            if id(e) in ops_of:
                best = None
                for g in ops_of[id(e)]:
                    if pend.get(e.stream) is not None:
                        g.xdep = pend[e.stream]
                    if best is None or g.t1 >= best.t1:
                        best = g
                last[e.stream] = best
                pend[e.stream] = None
                continue
            c = api_class(e.name)
            if e.stream >= 0 and e.corr and (c == "launch" or (c in ("memcpy", "memset")
                                                               and not e.blocked)):
                last[e.stream] = "unseen"
                continue
            k = event_call(e.name) if e.handle else ""
            if k == "record":
                v = last.get(e.stream, "empty") if e.stream >= 0 else None
                mark[e.handle] = None if v == "unseen" else v
            elif k == "wait":
                src = mark.get(e.handle)
                if isinstance(src, Node) and e.stream >= 0:
                    p = pend.get(e.stream)
                    if p is None or src.t1 > p.t1:
                        pend[e.stream] = src
            elif k == "sync" and e.handle in mark and mark[e.handle] is not None:
                m = mark[e.handle]
                self.sync_src[id(e)] = None if m == "empty" else m

    def _kineto_events(self):
        """Kineto's cuda_sync records: correlation order is submission order."""
        node_of = {id(n.ev): n for n in self.gpu_nodes}
        items = []  # (corr, step, event, [mark node])
        for e in self.ev:
            if e.kind == "sync":
                if e.sync_kind not in ("Stream Wait Event", "Event Sync"):
                    continue
                if e.wait_stream < 0 or not e.corr:
                    continue
                if e.record_corr:
                    m = e.record_corr if e.record_corr < e.corr else 0
                else:
                    m = e.corr if e.sync_kind == "Stream Wait Event" else 0
                if not m:
                    continue
                box = [None]
                items.append((m, 0, e, box))
                if e.sync_kind == "Stream Wait Event":
                    items.append((e.corr, 2, e, box))
            elif e.kind in GPU_KINDS and e.corr and e.stream >= 0:
                items.append((e.corr, 1, e, None))
        items.sort(key=lambda it: (it[0], it[1]))
        last, pend = {}, {}
        for corr, step, e, box in items:
            if step == 0:
                op = last.get((e.device, e.wait_stream))
                box[0] = node_of.get(id(op)) if op is not None else None
                if e.sync_kind == "Event Sync" and box[0] is not None:
                    api = self.api_by_corr.get(e.corr)
                    if api is not None:
                        self.sync_src[id(api)] = box[0]
            elif step == 1:
                key = (e.device, e.stream)
                if key not in last or last[key].order < e.order:
                    last[key] = e
                w = pend.pop(key, None)
                n = node_of.get(id(e))
                if w is None or n is None:
                    continue
                src = w
                if src.t1 - n.t0 >= KINETO_ROUNDING_NS or src.t1 >= n.t1:
                    continue
                n.xdep = src
            else:
                src = box[0]
                if src is None:
                    continue
                key = (e.device, e.stream)
                if key not in pend or src.t1 > pend[key].t1:
                    pend[key] = src

    def _kineto_inferred_waits(self):
        """A Kineto trace with no "Stream Wait Event" record: an operation that started at
        least 50 us after its stream's previous operation and its launch ended, within
        30 us of the end of another stream's operation (the last to end before it, after
        that gap began), waited for it."""
        if any(e.kind == "sync" and e.sync_kind == "Stream Wait Event" for e in self.ev):
            return
        for n in self.gpu_nodes:
            if n.xdep is not None or (n.seq is None and n.dep is None):
                continue
            rel = max(p.t1 for p in (n.seq, n.dep) if p is not None)
            if n.t0 - rel < INFER_GAP_NS:
                continue
            before = [m for m in self.gpu_nodes if m.t1 <= n.t0]
            before.sort(key=lambda m: m.t1)  # stable: node order on equal ends
            for m in reversed(before):
                if m.t1 < n.t0 - INFER_SLACK_NS or m.t1 <= rel:
                    break
                if m.lane != n.lane and m.ev.device == n.ev.device:
                    n.xdep = m
                    break

    # ------------------------------------------------------------ waits

    def _blocking(self, e):
        if e.kind != "api":
            return ""
        c = api_class(e.name)
        slow = e.dur > self.th["launch.runtime_cutoff_us"] * 1000
        if c == "sync":
            return "" if "WaitEvent" in e.name else "sync"
        if c in ("memcpy", "memset"):
            if e.blocked or "Async" not in e.name:
                return "copy"
            return "copy+infer" if self.kineto else ""
        if c == "launch":
            return "" if not slow else "qfull+infer" if self.kineto else "qfull"
        return "sync" if e.blocked else ""

    def _by_end(self):
        return sorted(self.gpu_nodes, key=lambda n: n.t1)  # stable: node order on ties

    @staticmethod
    def _last_by(by_end, t):
        k = -1
        for i, g in enumerate(by_end):
            if g.t1 <= t:
                k = i
        return k

    def _waits(self):
        host = self.nodes[:self.host_count]
        for n in host:
            if n.last and n.ev.end == n.t1:
                b = self._blocking(n.ev)
                n.block = b.split("+")[0]
                n.infer = b.endswith("+infer")
        if not self.gpu_nodes:
            for n in host:
                if n.block in ("sync", "copy") and not n.infer:
                    n.blocking = True
                n.block, n.infer = "", False
            return
        by_end = self._by_end()
        depth = {}
        lends = sorted(g.dep.t1 for g in by_end if g.dep is not None)
        for n in host:
            if n.block == "qfull":
                ts = n.ev.ts
                d = sum(1 for x in lends if x <= ts) - (self._last_by(by_end, ts) + 1)
                depth[id(n)] = d
                self.max_depth = max(self.max_depth, d)
        full = max(self.max_depth * 0.9, self.th["launch.queue_full_depth"])
        ret = int(self.th["launch.runtime_cutoff_us"] * 500)
        for n in host:
            if not n.block:
                continue
            e = n.ev
            d = depth.get(id(n), 0)
            if n.infer:
                self._infer(n, by_end, ret, d)
                continue
            if n.block == "qfull" and d < full:
                n.block = ""
                continue
            if id(e) in self.sync_src:
                src = self.sync_src[id(e)]
                if src is None or src.t1 < e.ts:
                    n.block = ""
                    continue
                if src.t1 <= n.t1:
                    n.dep, n.wait = src, True
                    continue
            k = self._last_by(by_end, n.t1)
            if k < 0 or by_end[k].t1 < e.ts:
                n.blocking = n.block in ("sync", "copy")
                n.block = ""
                continue
            n.dep, n.wait = by_end[k], True

    def _infer(self, n, by_end, ret, d):
        k = self._last_by(by_end, n.t1)
        launch = n.block == "qfull"
        n.block, n.infer = "", False
        g = by_end[k] if k >= 0 else None
        if g is None or g.t1 <= n.t0 or n.t1 - g.t1 > ret or n.t1 - n.t0 <= ret:
            return
        own = not launch and g.ev.corr == n.ev.corr and n.ev.corr != 0
        if not own and ((launch and d < 1) or not self._busy(by_end, k, n.t0, n.t1)):
            return
        n.dep, n.wait, n.infer = g, True, True
        n.block = "qfull" if launch else "copy"

    @staticmethod
    def _busy(by_end, k, s, e):
        total = 0
        scanned = 0
        while k >= 0 and scanned < 4096:
            if 2 * total >= e - s:
                return True
            g = by_end[k]
            if g.t1 > s:
                total += g.t1 - max(g.t0, s)
            k -= 1
            scanned += 1
        return k >= 0 or 2 * total >= e - s

    # ------------------------------------------------------------ threads

    def _threads(self):
        host = self.nodes[:self.host_count]
        by_thread = {}
        for n in host:
            by_thread.setdefault(n.ev.tid, []).append(n)
        launchers = {g.dep.ev.tid for g in self.gpu_nodes if g.dep is not None}

        def busy(seg):
            return sum(n.t1 - n.t0 for n in seg if not n.idle)

        top = None
        for tid, seg in by_thread.items():
            if top is None or busy(seg) > busy(by_thread[top]):
                top = tid
        self.pollers = []
        for tid, seg in by_thread.items():
            calls = all(n.ev.kind in ("api", "syscall") for n in seg)
            starts = [n.t0 for i, n in enumerate(seg) if i == 0 or n.t0 > seg[i - 1].t1]
            span = seg[-1].t1 - seg[0].t0
            if (tid == top or tid in launchers or not calls or len(starts) < 4
                    or 10 * busy(seg) > span or not self._periodic(starts)):
                continue
            for n in seg:
                n.poll = True
            self.pollers.append(tid)
        working = [tid for tid, seg in by_thread.items()
                   if any(not n.idle and not n.poll for n in seg)]
        if len(working) < 2:
            return
        release = sorted((n for n in host if not n.idle and not n.poll), key=lambda n: n.t1)
        for n in host:
            self._handoff(n, release)

    @staticmethod
    def _periodic(starts):
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        m = sorted(gaps)[len(gaps) // 2]
        inside = sum(1 for v in gaps if 2 * v >= m and v <= 2 * m)
        return m > 0 and 4 * inside >= 3 * len(gaps)

    @staticmethod
    def _thread_wait(e):
        n = e.name
        return (e.kind == "syscall" and e.sys == "wait"
                and (n.startswith("pthread_") or n.startswith("sem_") or n.startswith("futex"))
                and "timed" not in n and "clock" not in n)

    @staticmethod
    def _worked(x, s):
        total = 0
        while x is not None and x.t1 > s:
            if not (x.idle or x.wait or x.blocking or x.handoff):
                total += x.t1 - max(x.t0, s)
            x = x.seq
        return total

    def _handoff(self, g, release):
        o = g.ev
        wait = g.idle and self._thread_wait(o)
        self_time = o.kind in ("scope", "op") and not g.idle
        length = g.t1 - g.t0
        if (not wait and not self_time) or g.dep is not None or g.poll or length <= 0:
            return
        tol = HANDOFF_NS if wait or length // 4 > HANDOFF_NS else length // 4
        # a backward of this thread's forward starting in it: it waits for that thread
        by = None
        if self_time:
            inside = [(ts, b) for f, b, ts in self.backwards if f == o.tid and g.t0 <= ts < g.t1]
            by = max(inside)[1] if inside else None
        x = None
        for r in reversed([r for r in release if r.t1 < g.t1]):
            if r.t1 < g.t1 - tol or r.t1 <= g.t0:
                break
            if r.ev.tid != o.tid and (by is None or r.ev.tid == by):
                x = r
                break
        if x is None or (self_time and by is None and 2 * self._worked(x, g.t0) < length):
            return
        g.dep, g.handoff = x, True
        self.handoffs += 1
        self._wake(x, g.seq, g.t0)

    def _wake(self, x, h, s):
        w = x
        while w.seq is not None and w.seq.t0 >= s and not w.seq.idle:
            w = w.seq
        p = w.seq
        if w.t0 < s or w.dep is not None or (p is not None and (p.idle or p.t1 >= s)):
            return
        while h is not None and h.t1 > w.t0:
            h = h.seq
        if h is None or (p is not None and h.t1 <= p.t1) or h.t1 >= w.t1:
            return
        w.dep, w.woken = h, True
        self.wakes += 1

    # ------------------------------------------------------------ order

    def _order(self):
        for i, n in enumerate(self.nodes):
            n.index = i
        self.order = sorted(self.nodes, key=lambda n: (2 * n.t1 + (0 if n.gpu else 1),
                                                       n.index))
        for pos, n in enumerate(self.order):
            n.pos = pos
        for n in self.nodes:
            if n.seq is not None and n.seq.pos >= n.pos:
                n.seq = None
            if n.xdep is not None and n.xdep.pos >= n.pos:
                n.xdep = None
            if n.dep is not None and n.dep.pos >= n.pos:
                n.dep = None
                n.wait = n.handoff = n.woken = False
                n.block = ""

    def _latency(self):
        v = []
        for n in self.gpu_nodes:
            ed = n.dep.t1 if n.dep is not None else None
            if ed is None:
                continue
            if (n.t0 >= ed and (n.seq is None or n.seq.t1 < ed)
                    and (n.xdep is None or n.xdep.t1 < ed)):
                v.append(n.t0 - ed)
        self.launch_latency = sorted(v)[len(v) // 2] if v else 0

    def ends_run(self, n):
        return not n.idle and not n.poll

    # ------------------------------------------------------------ critical path

    def _host_cat(self, e):
        if e.kind in ("scope", "op"):
            return "comm_wait" if is_comm(e.name) else "host_compute"
        if e.kind == "api":
            return "cuda_runtime"
        if e.kind == "syscall":
            return {"io": "io_wait", "net": "io_wait", "fs": "io_wait", "wait": "host_wait",
                    "sleep": "host_wait", "driver": "cuda_runtime"}.get(e.sys, "host_compute")
        return "host_compute"

    @staticmethod
    def _gpu_cat(e):
        if e.kind == "kernel":
            return "communication" if is_comm(e.name) else "kernel"
        return {"h2d": "h2d_copy", "d2h": "d2h_copy"}.get(e.kind, "gpu_other")

    @staticmethod
    def _release(v):
        r = v.seq
        if (v.gpu or v.woken) and v.dep is not None and (r is None or v.dep.t1 > r.t1):
            r = v.dep
        if v.xdep is not None and (r is None or v.xdep.t1 > r.t1):
            r = v.xdep
        return r

    def _gap_cat(self, v, p):
        if not v.gpu:
            return "host_wait" if p is v.dep else "untraced"
        if p is v.dep:
            return "launch_latency"
        if p is v.xdep:
            return "comm_wait" if p.ev.kind == "kernel" and is_comm(p.ev.name) else "stream_wait"
        return "gpu_gap"

    def critical_path(self):
        cats = {c: 0 for c in CATEGORIES}
        total = [0]

        def piece(s, e, cat):
            s = max(s, self.ws)
            if e > s:
                cats[cat] += e - s
                total[0] += e - s

        if not self.nodes:
            return 0, cats
        pos = len(self.order)
        while pos > 1 and not self.ends_run(self.order[pos - 1]):
            pos -= 1
        at = self.order[pos - 1]
        cur = min(at.t1, self.we)
        guard = 2 * len(self.nodes) + 2
        while at is not None and cur > self.ws and guard > 0:
            guard -= 1
            v = at
            if (v.wait or v.handoff) and v.dep.t1 > v.t0:
                rel = min(v.dep.t1, cur)
                piece(rel, cur, "sync_return" if v.wait else "host_wait")
                cur, at = rel, v.dep
                continue
            if v.gpu:
                cat = self._gpu_cat(v.ev)
            elif v.blocking:
                cat = "blocked"
            else:
                cat = self._host_cat(v.ev)
            s = min(v.t0, cur)
            piece(s, cur, cat)
            cur = s
            p = self._release(v)
            if p is None:
                break
            pend = min(p.t1, cur)
            piece(pend, cur, self._gap_cat(v, p))
            cur, at = pend, p
        return total[0], cats

    # ------------------------------------------------------------ what-ifs

    def whatif(self, pick):
        """pick(node) -> a factor, or None: the node keeps its time. Returns the gain in
        percent of the window."""
        ne = {}
        end = self.ws
        for n in self.order:
            ne[id(n)] = self._retime(n, ne, pick)
            if self.ends_run(n):
                end = max(end, ne[id(n)])
        w = self.we - self.ws
        gain = 100.0 * (self.end - end) / w if w > 0 else 0.0
        return min(gain, 100.0)

    def _gpu_start(self, n, ne):
        """Several predecessors: the one that held the operation back in the recording
        keeps its gap; the others keep at most what the device needs after them."""
        es = n.seq.t1 if n.seq is not None else None
        ed = n.dep.t1 if n.dep is not None else None
        ex = n.xdep.t1 if n.xdep is not None else None
        lo = float("-inf")
        gs = n.t0 - es if es is not None else 0
        gd = n.t0 - ed if ed is not None else 0
        gx = n.t0 - ex if ex is not None else 0
        a = es if es is not None else lo
        b = ed if ed is not None else lo
        c = ex if ex is not None else lo
        if a >= b and a >= c:
            gd, gx = min(gd, self.launch_latency), min(gx, 0)
        elif b >= c:
            gs, gx = min(gs, 0), min(gx, 0)
        else:
            gs, gd = min(gs, 0), min(gd, self.launch_latency)
        starts = []
        if es is not None:
            starts.append(ne[id(n.seq)] + gs)
        if ed is not None:
            starts.append(ne[id(n.dep)] + gd)
        if ex is not None:
            starts.append(ne[id(n.xdep)] + gx)
        return max(starts)

    def _retime(self, n, ne, pick):
        preds = [p for p in (n.seq, n.dep if n.gpu else None, n.xdep if n.gpu else None)
                 if p is not None]
        if preds:
            po = max(p.t1 for p in preds)
            pn = max(ne[id(p)] for p in preds)
            t0 = pn + (n.t0 - po)
        else:
            t0 = n.t0
            pn = None
        if n.gpu and len(preds) > 1:
            t0 = self._gpu_start(n, ne)
        if not n.gpu and n.woken:
            d = ne[id(n.dep)] + (n.t0 - n.dep.t1)
            t0 = d if pn is None else max(pn, d)
        f = pick(n)
        dur = n.t1 - n.t0
        removed = f == 0 and getattr(pick, "removes", False)
        if removed and n.gpu:
            # gone with its launch: what follows or waits for it waits for its stream's
            # previous operation or an event's, else for its launch
            before = [ne[id(p)] for p in (n.seq, n.xdep) if p is not None]
            if before:
                return max(before)
            return ne[id(n.dep)] if n.dep is not None else n.t0
        if removed and n.wait and n.block == "qfull":
            return t0
        if (n.wait or n.handoff) and n.dep is not None:
            ret = n.t1 - n.dep.t1
            own = int(ret * f) if f is not None else ret
            return max(ne[id(n.dep)] + own, t0 + own)
        if f is None:
            return t0 + dur
        return t0 + round_half_away(dur * f)


def round_half_away(x):
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


# ---------------------------------------------------------------- the questions

def selector(spec, g):
    """The what-if questions check.py asks, as node pickers (docs/rules.md)."""
    name, _, factor = spec.rpartition("*")
    f = float(factor)

    def match(pattern, n):
        return n.startswith(pattern[:-1]) if pattern.endswith("*") else n == pattern

    if name == "gpu":
        return lambda n: f if n.gpu else None
    if name == "copies":
        return lambda n: f if n.gpu and n.ev.kind in ("h2d", "d2h") else None
    if name.startswith("kernel:"):
        pat = name[7:] or "*"
        return lambda n: f if n.gpu and n.ev.kind == "kernel" and match(pat, n.ev.name) else None
    if name.startswith("call:"):
        pat = name[5:] or "*"
        return lambda n: (f if not n.gpu and n.ev.kind in ("api", "syscall")
                          and match(pat, n.ev.name) else None)
    if name.startswith("scope:"):
        pat = name[6:] or "*"
        spans = {}
        for e in g.ev:
            if e.kind in ("scope", "op") and match(pat, e.name):
                spans.setdefault(e.tid, []).append([e.ts, e.end])
        merged = {}
        for tid, v in spans.items():
            v.sort()
            out = []
            for s, e in v:
                if out and s <= out[-1][1]:
                    out[-1][1] = max(out[-1][1], e)
                else:
                    out.append([s, e])
            merged[tid] = out

        def inside(tid, t0, t1):
            for s, e in merged.get(tid, ()):
                if s <= t0 and t1 <= e:
                    return True
            return False

        def launched_inside(n):
            api = g.api_by_corr.get(n.ev.corr) if n.ev.corr else None
            return api is not None and inside(api.tid, api.ts, api.end)

        # the scope, the CUDA calls made in it and the GPU work they launched; at 0 the
        # work leaves its streams
        def pick(n):
            hit = launched_inside(n) if n.gpu else inside(n.ev.tid, n.t0, n.t1)
            return f if hit else None
        pick.removes = True
        return pick
    raise ValueError("unknown what-if " + spec)


def analyze(path, questions, thresholds=None):
    events, links, kineto = read(path)
    g = Graph(events, kineto, thresholds, links)
    length, cats = g.critical_path()
    gains = {q: g.whatif(selector(q, g)) for q in questions}
    return {"length_ms": length / 1e6, "categories": {k: v / 1e6 for k, v in cats.items()},
            "what_if": gains}
