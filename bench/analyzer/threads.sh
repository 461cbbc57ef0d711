#!/bin/sh
# The analyzer on one trace with one thread and with N side by side (docs/benchmarks.md,
# "Both cores"): parse + analyze + markdown and --validate (parse only), each configuration
# run in turn ROUNDS times (alternating, so that the machine's load hits all alike), medians
# of wall time, CPU time and peak RSS; then the tokenizer alone (scan-bench). With
# BEFORE_BUILD, that build's analyzer runs in the same rotation (its default threads).
# Usage: bench/analyzer/threads.sh [BUILD_DIR] [EVENTS] [ROUNDS] [N] [BEFORE_BUILD]
#        (defaults: build, 2000000, 5, 2)
set -eu
build=${1:-build}
events=${2:-2000000}
rounds=${3:-5}
n=${4:-2}
before=${5:-}
analyze=$build/analyzer/inferscope-analyze
[ -x "$analyze" ] && [ -x "$build/bench/analyzer/gen-trace" ] ||
	{ echo "threads.sh: build $build first" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/isc-threads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$build/bench/analyzer/gen-trace" "$events" > "$tmp/trace.json"
bytes=$(stat -c %s "$tmp/trace.json")
echo "trace: $events events, $bytes bytes; $(nproc) online CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
configs="t1 tN"
[ -n "$before" ] && configs="before $configs"
for r in $(seq "$rounds"); do
	for c in $configs; do
		case $c in
		t1) cmd="$analyze --threads 1" ;;
		tN) cmd="$analyze --threads $n" ;;
		before) cmd="$before/analyzer/inferscope-analyze" ;;
		esac
		for mode in full parse; do
			args="-o /dev/null"
			[ $mode = parse ] && args="--validate"
			# shellcheck disable=SC2086 # cmd holds the command and its options
			/usr/bin/time -f "$c $mode %e %U %S %M" -o "$tmp/t" $cmd $args "$tmp/trace.json" \
				> /dev/null
			cat "$tmp/t" >> "$tmp/all"
		done
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
sort -k1,1 -k2,2 -s "$tmp/all" | awk -v n="$events" -v b="$bytes" -v th="$n" '
	function median(s,   a, k) { k = split(s, a, " "); asort(a); return a[int((k + 1) / 2)] }
	{ key = $1 " " $2; w[key] = w[key] " " $3; c[key] = c[key] " " ($4 + $5); m[key] = m[key] " " $6 }
	END {
		for (key in w) {
			split(key, p, " ")
			label = p[1] == "t1" ? "--threads 1" : p[1] == "tN" ? "--threads " th : "before"
			label = label (p[2] == "full" ? ", parse+analyze+md" : ", --validate")
			wm = median(w[key]); rss = median(m[key])
			printf "%-34s wall %6.2f s  cpu %6.2f s  %5.2f M events/s  %6.0f MB/s  peak %5.0f MiB  %5.1f B/event\n",
				label, wm, median(c[key]), n / wm / 1e6, b / wm / 1e6, rss / 1024, rss * 1024 / n
		}
	}' | sort
[ -x "$build/bench/analyzer/scan-bench" ] && "$build/bench/analyzer/scan-bench" "$tmp/trace.json" "$n"
