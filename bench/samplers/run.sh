#!/bin/sh
# CPU sampling overhead and cost per sample, side by side in one run:
#   bench/samplers/run.sh [build dir]
# CPU time (user + sys, from the kernel's accounting of the child) of a fixed amount
# of work, without the preload, with the preload and sampling off, with the default
# 100 Hz, and at 1000 Hz; the best of $REPS runs each (the machine is shared: the
# minimum is the least disturbed). ns per sample = (CPU at 1000 Hz - CPU with sampling
# off) / samples in the 1000 Hz trace. perf record and py-spy in the same run where
# installed.
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$build" && pwd)/preload/libinferscope.so
REPS=${REPS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/cpu-bound" "$here/cpu-bound.c"
PY=${PY:-python3}

cpu() { # prints the best user+sys seconds of REPS runs of "$@"
	best=
	for _ in $(seq "$REPS"); do
		t=$( { /usr/bin/time -f '%U %S' "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1 |
			awk '{print $1 + $2}')
		best=$(echo "$best $t" | awk '{ if ($1 == "" || $2 < $1) print $2; else print $1 }')
	done
	echo "$best"
}

samples() { # samples in the trace of one run at the given rate
	(cd "$tmp" && rm -f trace.json && env LD_PRELOAD="$lib" INFERSCOPE_CPU_SAMPLE="$1" \
		"$@" >/dev/null 2>&1 || true)
}

bench() { # name, command...
	name=$1
	shift
	plain=$(cpu "$@")
	off=$(cpu env LD_PRELOAD="$lib" INFERSCOPE_OUTPUT="$tmp/o.json" INFERSCOPE_CPU_SAMPLE=0 "$@")
	d100=$(cpu env LD_PRELOAD="$lib" INFERSCOPE_OUTPUT="$tmp/o.json" "$@")
	d1k=$(cpu env LD_PRELOAD="$lib" INFERSCOPE_OUTPUT="$tmp/o.json" INFERSCOPE_CPU_SAMPLE=1000 "$@")
	env LD_PRELOAD="$lib" INFERSCOPE_OUTPUT="$tmp/k.json" INFERSCOPE_CPU_SAMPLE=1000 "$@" >/dev/null
	n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['trace_metadata']['sampling']['samples'])" "$tmp/k.json")
	perf_t=-
	if command -v perf >/dev/null 2>&1 && perf record -q -o "$tmp/p.data" -F 100 -g true >/dev/null 2>&1; then
		perf_t=$(cpu perf record -q -o "$tmp/p.data" -F 100 -g "$@")
	fi
	spy_t=-
	if command -v py-spy >/dev/null 2>&1 && [ "$name" = python ]; then
		spy_t=$(cpu py-spy record -r 100 -o "$tmp/s.txt" -f raw -- "$@")
	fi
	echo "$name $plain $off $d100 $d1k $n $perf_t $spy_t" | awk '{
		printf "| %s | %.3f | %.3f | %.3f (%+.2f %%) | %.3f | %d | %.0f | %s | %s |\n",
			$1, $2, $3, $4, 100 * ($4 - $3) / $3, $5, $6, 1e9 * ($5 - $3) / $6, $7, $8 }'
}

echo "| program | CPU s, no preload | preload, sampling off | default 100 Hz (vs off) | 1000 Hz | samples at 1000 Hz | ns per sample | perf record -F 100 -g | py-spy -r 100 |"
echo "|---|---|---|---|---|---|---|---|---|"
bench C "$tmp/cpu-bound" 4000
bench python "$PY" "$here/cpu-bound.py" 40
