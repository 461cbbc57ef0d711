#!/usr/bin/env bash
# Runs the before/after pairs (tests/analyzer/test-pairs.c) and writes their table into
# docs/causal-pairs.md, between the "pairs:begin" and "pairs:end" markers.
# Usage: scripts/causal-pairs.sh [BUILD_DIR]   (default: build; it must be built)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
exe=$build/tests/analyzer/test-analyzer-pairs
[ -x "$exe" ] || { echo "causal-pairs.sh: $exe is not built (ninja -C $build)" >&2; exit 2; }
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
status=0
ISC_PAIRS_TABLE=$rows CRITERION_JOBS=1 \
	ISC_WORKLOADS=$PWD/$build/tests/workloads \
	ISC_PRELOAD=$PWD/$build/preload/libinferscope.so \
	ISC_VTIME=$PWD/$build/tests/simgpu/libsimgpu-vtime.so \
	"$exe" >/dev/null 2>&1 || status=$?
doc=docs/causal-pairs.md
{
	sed -n '1,/<!-- pairs:begin -->/p' "$doc"
	echo
	echo "Written by \`scripts/causal-pairs.sh\` on $(date -u +%Y-%m-%d), load average" \
		"$(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs."
	echo
	echo "| bottleneck | after (the fix) | prediction from | window before | predicted | measured | error | attempt | within |"
	echo "|---|---|---|---:|---:|---:|---:|---:|---|"
	sort "$rows"
	echo
	sed -n '/<!-- pairs:end -->/,$p' "$doc"
} > "$doc.new"
mv "$doc.new" "$doc"
[ "$status" -eq 0 ] || echo "causal-pairs.sh: some pairs failed (the table says which)" >&2
exit "$status"
