#!/usr/bin/env bash
# Core benchmarks, side by side in one run (this machine is noisy: compare ratios taken
# together, not figures from different runs). Usage: bench/run-core.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
b=$build/bench/core
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
events=${EVENTS:-5000000}

echo "## trace writing, $events events (best of 3)"
best() { sort -t= -k4 -n | tail -1; }
for i in 1 2 3; do "$b/bench-trace-write" "$events" "$tmp" /dev/null; done | best | sed 's/^/to \/dev\/null (formatting only): /'
for i in 1 2 3; do "$b/bench-trace-write" "$events" "$tmp"; done | best | sed 's/^/to a file in $TMPDIR: /'
bytes=$(( events * 306 / 1048576 ))
echo -n "filesystem baseline, dd of ${bytes} MiB: "
dd if=/dev/zero of="$tmp/dd" bs=1M count="$bytes" conv=fsync 2>&1 | tail -1
rm -f "$tmp/dd"

echo "## recording path (reserve + fill + commit)"
"$b/bench-record" 20000000

echo "## scope push+pop through the public API"
"$b/bench-scopes" 2000000 | sed 's/^/without preload: /'
INFERSCOPE_OUTPUT=$tmp/scopes.json LD_PRELOAD=$(realpath "$build/preload/libinferscope.so") \
	"$b/bench-scopes" 2000000 | sed 's/^/with preload:    /'
