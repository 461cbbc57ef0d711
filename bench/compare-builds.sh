#!/usr/bin/env bash
# Two builds of the project side by side, for a change that must not make anything
# slower (a refactor, a layout change): the preload's hot paths, end to end on a Python
# workload, the trace writer, and the analyzer's throughput and peak memory, each pair
# alternated in one run so that the machine's noise hits both alike.
# Usage: bench/compare-builds.sh BEFORE_BUILD AFTER_BUILD   (ROUNDS=N, default 7;
#        EVENTS=N analyzer trace size, default 1000000)
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
rounds=${ROUNDS:-7}
events=${EVENTS:-1000000}
py=$(python3 -c 'import sys; print(sys.executable)') # the interpreter, not a shim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in "$before" "$after"; do
	[ -f "$b/preload/libinferscope.so" ] && [ -x "$b/analyzer/inferscope-analyze" ] ||
		{ echo "compare-builds: build $b first" >&2; exit 2; }
done
env_of() { echo "INFERSCOPE_OUTPUT=$tmp/trace.json LD_PRELOAD=$1/preload/libinferscope.so"; }
hb=$after/bench/host # the benchmark programs themselves: one build's, for both

best_of() { # label, program args... : best of 5 alternating, one line per build
	local label=$1
	shift
	for i in 1 2 3 4 5; do
		env $(env_of "$before") "$@" | sed 's/^/before /'
		env $(env_of "$after") "$@" | sed 's/^/after /'
	done | awk -v l="$label" '{ k = $2; v = $3
		if (!((($1) SUBSEP k) in best) || v < best[$1, k]) best[$1, k] = v; keys[k] = 1 }
		END { for (k in keys) printf "%s %s: before %.2f ns, after %.2f ns, ratio %.3f\n",
		      l, k, best["before", k], best["after", k], best["after", k] / best["before", k] }'
}

echo "## preload hot paths (best of 5, alternating)"
best_of "malloc+free" "$hb/bench-malloc"
best_of "read(2)" "$hb/bench-syscall" 2000000 threaded

echo "## end to end: Python JSON, text and file I/O (median of $rounds rounds)"
python3 "$here/host/side-by-side.py" "$rounds" \
	"native=$py $hb/workload.py $tmp 6" \
	"before=$(env_of "$before") $py $hb/workload.py $tmp 6" \
	"after=$(env_of "$after") $py $hb/workload.py $tmp 6"

echo "## trace writer, 2000000 events to /dev/null (best of 3 each, alternating)"
for i in 1 2 3; do
	"$before/bench/core/bench-trace-write" 2000000 "$tmp" /dev/null | sed 's/^/before /'
	"$after/bench/core/bench-trace-write" 2000000 "$tmp" /dev/null | sed 's/^/after /'
done | sort -k1,1 -s | awk '{ print }'

echo "## analyzer: $events events, parse + analyze + markdown (best of 3, alternating)"
"$after/bench/analyzer/gen-trace" "$events" > "$tmp/a.json"
for i in 1 2 3; do
	for b in before after; do
		dir=$before
		[ $b = after ] && dir=$after
		/usr/bin/time -f "$b %e %U %S %M" -o "$tmp/t" "$dir/analyzer/inferscope-analyze" \
			-o "$tmp/a.md" "$tmp/a.json"
		cat "$tmp/t"
	done
done | awk -v n="$events" '{ if (!($1 in w) || $2 < w[$1]) { w[$1] = $2; c[$1] = $3 + $4 }
		if (!($1 in r) || $5 < r[$1]) r[$1] = $5 }
	END { for (b in w) printf "%s: wall %.2f s, cpu %.2f s, %.2f M events/s, peak %.0f MiB, %.0f B/event\n",
	      b, w[b], c[b], n / w[b] / 1e6, r[b] / 1024, r[b] * 1024 / n
	      printf "ratio after/before: wall %.3f, peak memory %.3f\n", w["after"] / w["before"],
	      r["after"] / r["before"] }'
