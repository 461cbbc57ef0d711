#!/usr/bin/env bash
# Regenerates the golden outputs of the gate example (tests/e2e/golden/) from the
# recorded traces in tests/e2e/data/, after a deliberate change of the gate's output.
#   tests/e2e/regen.sh [BUILD_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
cd "$top/tests/e2e/data"
set +e
"$build/analyzer/inferscope-analyze" --baseline serve-main.json.gz \
	--check 'bottleneck==gpu_bound' --check 'dropped_events==0' \
	--gate-summary ../golden/gate-summary.md --junit ../golden/gate-junit.xml \
	-f json -o /dev/null serve-pageable.json.gz
status=$?
set -e
[ $status -eq 1 ] || { echo "regen: expected the gate to fail (1), got $status" >&2; exit 1; }
echo "regenerated tests/e2e/golden/gate-summary.md and gate-junit.xml"
