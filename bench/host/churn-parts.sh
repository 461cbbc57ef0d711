#!/usr/bin/env bash
# The allocator churn (bench-churn: 2 threads x 5 M malloc/free, a read(2) per 64) side by
# side with a baseline library, and what each part of the hooks adds, in one run: native,
# the baseline's and this library's default, then this library with the parts switched
# on one at a time (interposition alone; + the malloc counters; + the system-call hooks;
# + CPU samples = the default), and the same at 1,000 calls per thread (the fixed cost:
# start, collector, the trace written at exit). Medians of ROUNDS round-robin rounds
# (side-by-side.py), wall and CPU time of the process tree (docs/benchmarks.md).
# Usage: bench/host/churn-parts.sh BUILD_DIR BASELINE.so [ROUNDS]
set -euo pipefail
build=$(realpath "$1")
base=$(realpath "$2")
rounds=${3:-7}
here=$(dirname "$(realpath "$0")")
churn=$build/bench/host/bench-churn
lib=$build/preload/libinferscope.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out="rm -f $tmp/t*.json; INFERSCOPE_OUTPUT=$tmp/t.json"
off="INFERSCOPE_CPU_SAMPLE=0 INFERSCOPE_MALLOC=0 INFERSCOPE_SYSCALLS=0"
for calls in 5000000 1000; do
	echo "## $calls calls per thread, 2 threads (median of $rounds rounds)"
	python3 "$here/side-by-side.py" "$rounds" \
		"native=$churn $calls" \
		"baseline library=$out LD_PRELOAD=$base $churn $calls" \
		"this library=$out LD_PRELOAD=$lib $churn $calls" \
		"interposition only=$out $off LD_PRELOAD=$lib $churn $calls" \
		"+ malloc counters=$out INFERSCOPE_CPU_SAMPLE=0 INFERSCOPE_SYSCALLS=0 LD_PRELOAD=$lib $churn $calls" \
		"+ syscall hooks=$out INFERSCOPE_CPU_SAMPLE=0 LD_PRELOAD=$lib $churn $calls"
done
