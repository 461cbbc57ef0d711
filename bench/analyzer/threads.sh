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
python3 - "$tmp/all" "$events" "$bytes" "$n" <<'PY'
import statistics, sys
rows, n, b, th = {}, int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for line in open(sys.argv[1]):
	c, mode, wall, user, sys_, rss = line.split()
	rows.setdefault((c, mode), []).append((float(wall), float(user) + float(sys_), int(rss)))
names = {"t1": "--threads 1", "tN": "--threads " + th, "before": "before"}
for (c, mode), v in sorted(rows.items()):
	w = statistics.median(x[0] for x in v)
	cpu = statistics.median(x[1] for x in v)
	rss = statistics.median(x[2] for x in v)
	label = names[c] + (", parse+analyze+md" if mode == "full" else ", --validate")
	print("%-34s wall %6.2f s (%s)  cpu %6.2f s  %5.2f M events/s  %5.0f MB/s  peak %5.0f MiB  %5.1f B/event"
	      % (label, w, " ".join("%.2f" % x[0] for x in v), cpu, n / w / 1e6, b / w / 1e6,
		 rss / 1024, rss * 1024 / n))
PY
[ -x "$build/bench/analyzer/scan-bench" ] && "$build/bench/analyzer/scan-bench" "$tmp/trace.json" "$n"
