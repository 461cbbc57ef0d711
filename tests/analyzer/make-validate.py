#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes tests/analyzer/data/validate/{good,bad}/: small traces that either follow the
InferScope format or break exactly one rule of it. The test suite checks that
`inferscope-analyze --validate` and docs/trace-format.schema.json agree on every one.
Usage: make-validate.py OUTDIR
"""
import copy
import json
import os
import sys

BASE = {
    "format_version": "1.0",
    "trace_metadata": {
        "pid": 10, "hostname": "h", "end_reason": "exit", "complete": True,
        "dropped_events": {"total": 0, "by_kind": {}, "by_thread": {}},
        "cupti": {"status": "active", "dropped_records": 0},
        "capture": {"windows": [[100.0, 200.0]]},
    },
    "system_info": {"cpu_count": 4},
    "events": [
        {"id": 0, "type": "cpu_call", "name": "step", "timestamp_start_us": 100.0,
         "duration_us": 50.0, "metadata": {"thread_id": 1, "call_depth": 0, "scope_id": 1,
                                           "parent_scope": None, "parent_scope_id": None,
                                           "source": "api"}},
        {"id": 1, "type": "cuda_api", "name": "cudaLaunchKernel", "timestamp_start_us": 110.0,
         "duration_us": 5.0, "metadata": {"thread_id": 1, "correlation_id": 7,
                                          "stream_id": 0, "return_code": 0,
                                          "blocked": False, "source": "interposer"}},
        {"id": 2, "type": "gpu_kernel", "name": "k", "timestamp_start_us": 120.0,
         "duration_us": 30.0, "metadata": {"thread_id": 1, "correlation_id": 7,
                                           "device_id": 0, "stream_id": 7,
                                           "grid_dim": [1, 1, 1], "block_dim": [64, 1, 1],
                                           "occupancy": 0.5}},
        {"id": 3, "type": "h2d_copy", "name": "copy", "timestamp_start_us": 112.0,
         "duration_us": 4.0, "metadata": {"thread_id": 1, "correlation_id": 8,
                                          "bytes": 4096, "kind": "pinned"}},
        {"id": 4, "type": "cpu_syscall", "name": "read", "timestamp_start_us": 160.0,
         "duration_us": 20.0, "metadata": {"thread_id": 1, "fd": 3, "bytes": 10,
                                           "return_value": 10, "category": "io"}},
        {"id": 5, "type": "instant", "name": "mark", "timestamp_us": 170.0,
         "metadata": {"thread_id": 1, "source": "api", "user_metadata": {"batch": 4}}},
        {"id": 6, "type": "counter", "name": "cpu_time", "timestamp_start_us": 180.0,
         "metadata": {"thread_id": 1, "value": 42.5, "unit": "us"}},
        {"id": 7, "type": "gpu_memset", "name": "memset", "timestamp_start_us": 151.0,
         "duration_us": 1.0, "metadata": {"thread_id": 1, "correlation_id": 9, "bytes": 64,
                                          "value": 0, "kind": "device"}},
    ],
    "relationships": {"scopes": [{"id": 1, "name": "step", "parent_id": None,
                                  "child_ids": [], "event_index": 0, "thread_id": 1}]},
}


def ev(doc, i):
    return doc["events"][i]


def good_variants():
    yield "minimal", lambda d: None
    yield "unknown-type", lambda d: d["events"].append(
        {"id": 8, "type": "future_event", "name": "x", "timestamp_start_us": 1.0,
         "metadata": {"thread_id": 1, "whatever": [1, {"a": 2}]}})
    yield "extra-fields", lambda d: (ev(d, 0).update({"wall_clock_start": "x"}),
                                     ev(d, 0)["metadata"].update({"new_field": {"n": 1}}),
                                     d.update({"future_section": [1, 2]}))
    yield "end-instead-of-duration", lambda d: (ev(d, 0).pop("duration_us"),
                                                ev(d, 0).update({"timestamp_end_us": 150.0}))
    yield "string-scope-ids", lambda d: (ev(d, 0)["metadata"].update({"scope_id": "s1"}),
                                         d["relationships"]["scopes"][0].update(
                                             {"id": "s1", "child_ids": ["s2"]}))
    yield "version-1-2-3", lambda d: d.update({"format_version": "1.2.3"})
    yield "graph-nodes", graph_nodes


def graph_node(i, op, node, **meta):
    return {"id": i, "type": "cuda_graph_node", "name": "cudaLaunchKernel",
            "timestamp_start_us": 105.0 + i, "duration_us": 0,
            "metadata": dict({"thread_id": 1, "operation": op, "graph_node_id": node,
                              "graph_id": 1, "kind": "kernel"}, **meta)}


def graph_nodes(d):
    """A kernel replayed from node 2, a copy of node 1, which a capture made."""
    d["events"] += [graph_node(8, "created", 1, correlation_id=6),
                    graph_node(9, "cloned", 2, original_node_id=1)]
    ev(d, 2)["metadata"].update({"graph_id": 1, "graph_node_id": 2})


def bad_variants():
    yield "missing-format-version", lambda d: d.pop("format_version")
    yield "version-2", lambda d: d.update({"format_version": "2.0"})
    yield "missing-trace-metadata", lambda d: d.pop("trace_metadata")
    yield "events-not-array", lambda d: d.update({"events": {"a": 1}})
    yield "event-not-object", lambda d: d["events"].append(3)
    yield "missing-thread-id", lambda d: ev(d, 2)["metadata"].pop("thread_id")
    yield "thread-id-string", lambda d: ev(d, 1)["metadata"].update({"thread_id": "1"})
    yield "negative-duration", lambda d: ev(d, 0).update({"duration_us": -1})
    yield "missing-duration", lambda d: ev(d, 4).pop("duration_us")
    yield "missing-timestamp", lambda d: ev(d, 0).pop("timestamp_start_us")
    yield "missing-id", lambda d: ev(d, 3).pop("id")
    yield "negative-id", lambda d: ev(d, 3).update({"id": -3})
    yield "name-not-string", lambda d: ev(d, 3).update({"name": 12})
    yield "unknown-copy-kind", lambda d: ev(d, 3)["metadata"].update({"kind": "paged"})
    yield "missing-correlation", lambda d: ev(d, 2)["metadata"].pop("correlation_id")
    yield "occupancy-above-one", lambda d: ev(d, 2)["metadata"].update({"occupancy": 1.5})
    yield "grid-dim-two", lambda d: ev(d, 2)["metadata"].update({"grid_dim": [1, 2]})
    yield "blocked-not-bool", lambda d: ev(d, 1)["metadata"].update({"blocked": 1})
    yield "bad-syscall-category", lambda d: ev(d, 4)["metadata"].update({"category": "disk"})
    yield "bad-scope-source", lambda d: ev(d, 0)["metadata"].update({"source": "magic"})
    yield "counter-without-value", lambda d: ev(d, 6)["metadata"].pop("value")
    yield "memset-value-float", lambda d: ev(d, 7)["metadata"].update({"value": 0.5})
    yield "dropped-total-string", lambda d: d["trace_metadata"]["dropped_events"].update(
        {"total": "0"})
    yield "bad-cupti-status", lambda d: d["trace_metadata"]["cupti"].update({"status": "on"})
    yield "bad-capture-window", lambda d: d["trace_metadata"]["capture"].update(
        {"windows": [[1.0]]})
    yield "cpu-count-negative", lambda d: d["system_info"].update({"cpu_count": -1})
    yield "scope-without-name", lambda d: d["relationships"]["scopes"][0].pop("name")
    yield "metadata-not-object", lambda d: ev(d, 5).update({"metadata": [1]})
    yield "graph-node-without-id", lambda d: (graph_nodes(d),
                                              ev(d, 8)["metadata"].pop("graph_node_id"))
    yield "graph-node-bad-operation", lambda d: (graph_nodes(d), ev(d, 8)["metadata"].update(
        {"operation": "captured"}))
    yield "graph-clone-without-original", lambda d: (graph_nodes(d),
                                                     ev(d, 9)["metadata"].pop(
                                                         "original_node_id"))


def write(outdir, sub, variants):
    os.makedirs(os.path.join(outdir, sub), exist_ok=True)
    for name, change in variants:
        doc = copy.deepcopy(BASE)
        change(doc)
        with open(os.path.join(outdir, sub, name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


def main():
    write(sys.argv[1], "good", good_variants())
    write(sys.argv[1], "bad", bad_variants())


if __name__ == "__main__":
    main()
