#!/bin/sh
# A whole job's traces in one command (docs/benchmarks.md, "A whole job").
# Usage: bench/analyzer/run-job.sh [BUILD_DIR] [MB] [RANKS...] [-- BASELINE_ANALYZER]
#   (defaults: build, 150, 8 16 64)
# Writes RANKS synthetic rank traces of about MB megabytes each (gen-ranks) to $TMPDIR,
# then times `inferscope-analyze rank*/trace.json` with --jobs 1 and --jobs 2 (wall, CPU,
# peak RSS by /usr/bin/time), and, side by side, BASELINE_ANALYZER (an analyzer that reads
# all inputs together) on the same files when given. The traces are deleted after each
# count: 64 x 150 MB takes 9.6 GB of disk.
set -eu
build=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))
mb=${1:-150}
shift $(( $# > 0 ? 1 : 0 ))
counts=""
base=""
while [ $# -gt 0 ]; do
	if [ "$1" = "--" ]; then
		base=${2:-}
		break
	fi
	counts="$counts $1"
	shift
done
counts=${counts:-8 16 64}
analyze=$build/analyzer/inferscope-analyze
gen=$build/bench/analyzer/gen-ranks
[ -x "$analyze" ] && [ -x "$gen" ] || { echo "run-job.sh: build $build first" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/isc-job-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
measure() {	# label, command...
	label=$1
	shift
	status=0
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" > "$tmp/out" 2> "$tmp/err" || status=$?
	read -r wall user sys rss < "$tmp/time"
	awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v st="$status" \
		-v b="$bytes" 'BEGIN { printf "%-28s wall %7.2f s  cpu %7.2f s  %6.0f MB/s  peak %7.0f MiB  exit %d\n",
			 l, w, u + s, b / 1048576 / w, r / 1024, st }'
	grep -h "held at once\|straggler:" "$tmp/out" | cut -c1-150 || true
	[ "$status" -eq 0 ] || head -3 "$tmp/err"
}
for n in $counts; do
	rm -rf "$tmp/job"
	mkdir -p "$tmp/job"
	"$gen" "$tmp/job" "$n" "$mb"
	bytes=$(cat "$tmp"/job/rank*/trace.json | wc -c)
	echo "== $n ranks x $mb MB ($(( bytes / 1048576 )) MiB in all)"
	measure "$n ranks, --jobs 1" "$analyze" --jobs 1 "$tmp"/job/rank*/trace.json
	measure "$n ranks, --jobs 2" "$analyze" --jobs 2 "$tmp"/job/rank*/trace.json
	if [ -n "$base" ]; then
		measure "$n ranks, baseline" "$base" "$tmp"/job/rank*/trace.json
	fi
done
