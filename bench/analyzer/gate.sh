#!/bin/sh
# What the gate adds to an analysis (docs/benchmarks.md, "Gate"), side by side in one run.
# Usage: bench/analyzer/gate.sh [BUILD_DIR] [EVENTS]     (defaults: build, 1000000)
# On one synthetic trace: the analysis alone; with checks; with a JSON baseline (the
# analysis of the same trace, what CI keeps); with the trace itself as the baseline
# (analysed twice); and a window trimmed to the trace's own span (GPU work then counts
# by its launching call, one correlation lookup per GPU event).
set -eu
build=${1:-build}
events=${2:-1000000}
analyze=$build/analyzer/inferscope-analyze
gen=$build/bench/analyzer/gen-trace
[ -x "$analyze" ] && [ -x "$gen" ] || { echo "gate.sh: build $build first" >&2; exit 2; }
command -v hyperfine > /dev/null || { echo "gate.sh: needs hyperfine" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/isc-gate-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$gen" "$events" > "$tmp/trace.json"
"$analyze" -f json -o "$tmp/base.json" "$tmp/trace.json"
span=$("$analyze" -f json "$tmp/trace.json" | python3 -c \
	'import json,sys; w=json.load(sys.stdin)["window"]; print("%s:%s" % (w["start_us"], w["end_us"]))')
echo "trace: $events events; baseline JSON $(stat -c %s "$tmp/base.json") bytes"
hyperfine -N --warmup 1 --runs "${RUNS:-5}" \
	-n 'analysis' "$analyze -o /dev/null $tmp/trace.json" \
	-n 'analysis + 4 checks' "$analyze -o /dev/null --check gpu_compute>=1 --check idle<=99 --check dropped_events==0 --check kernel:*.count>=0 $tmp/trace.json" \
	-n 'analysis + JSON baseline' "$analyze -o /dev/null --baseline $tmp/base.json $tmp/trace.json" \
	-n 'analysis + trace baseline' "$analyze -o /dev/null --baseline $tmp/trace.json $tmp/trace.json" \
	-n 'analysis, trimmed window' "$analyze -o /dev/null --window $span $tmp/trace.json"
