#!/bin/sh
# Analyzer throughput and memory (docs/benchmarks.md, "Analyzer").
# Usage: bench/analyzer/run.sh [BUILD_DIR] [EVENTS]     (defaults: build, 5000000)
# Writes a synthetic trace to $TMPDIR, then times parse + analyze + report for each
# writer with /usr/bin/time (wall, CPU, peak RSS), and, side by side on a 1/5-size trace,
# the same work against Python's json.load of that file (a DOM parse, for scale).
set -eu
build=${1:-build}
events=${2:-5000000}
analyze=$build/analyzer/inferscope-analyze
gen=$build/bench/analyzer/gen-trace
[ -x "$analyze" ] && [ -x "$gen" ] || { echo "run.sh: build $build first" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/isc-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$gen" "$events" > "$tmp/trace.json"
bytes=$(stat -c %s "$tmp/trace.json")
echo "trace: $events events, $bytes bytes ($(( bytes / events )) bytes/event)"
"$analyze" --validate "$tmp/trace.json" > /dev/null
measure() {	# label, command...
	label=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" > /dev/null
	read -r wall user sys rss < "$tmp/time"
	awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v n="$events" \
		'BEGIN { printf "%-22s wall %6.2f s  cpu %6.2f s  %8.0f events/s  peak %7.0f MiB  %5.1f B/event\n",
			 l, w, u + s, n / w, r / 1024, r * 1024 / n }'
}
for f in md json html; do
	measure "parse+analyze+$f" "$analyze" -f "$f" -o "$tmp/out.$f" "$tmp/trace.json"
done
measure "validate (parse only)" "$analyze" --validate "$tmp/trace.json"
small=$(( events / 5 ))
"$gen" "$small" > "$tmp/small.json"
events=$small
measure "analyzer, 1/5 trace" "$analyze" -o "$tmp/small.md" "$tmp/small.json"
if command -v python3 > /dev/null; then
	measure "python json.load, 1/5" python3 -c "import json,sys; json.load(open(sys.argv[1]))" \
		"$tmp/small.json"
fi
