#!/usr/bin/env bash
# What each part of the host hooks costs on the allocator churn, in instructions
# (valgrind --tool=cachegrind: deterministic, where wall and CPU time on a loaded machine
# cannot resolve a few percent). Per malloc+free pair: (the run's instructions - native's)
# / pairs, with CPU samples off and a 1 s system-call threshold, so that valgrind's own
# slowness makes no events; the parts added one at a time, for a baseline library and this
# one. The last line: the whole run at 1,000 calls per thread with the defaults (the fixed
# cost: start, collector, the trace written at exit).
# Usage: bench/host/churn-instructions.sh BUILD_DIR BASELINE.so [CALLS_PER_THREAD]
set -euo pipefail
build=$(realpath "$1")
base=$(realpath "$2")
calls=${3:-200000}
churn=$build/bench/host/bench-churn
lib=$build/preload/libinferscope.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
quiet="INFERSCOPE_CPU_SAMPLE=0 INFERSCOPE_SYSCALL_THRESHOLD=1s"

# instructions of every process of one run (a fork at exit writes its own file)
ir() {
	local n=$1
	shift
	rm -f "$tmp"/cg.* "$tmp"/t*.json
	env INFERSCOPE_OUTPUT="$tmp/t.json" "$@" valgrind --tool=cachegrind --cache-sim=no \
		--cachegrind-out-file="$tmp/cg.%p" "$churn" "$n" >/dev/null 2>&1
	cat "$tmp"/cg.* | awk '/^summary:/ { s += $2 } END { print s }'
}

native=$(ir "$calls")
pairs=$((2 * calls))
printf '%-58s %12s %10s\n' "run ($calls calls per thread, 2 threads)" instructions "per pair"
printf '%-58s %12s %10.1f\n' native "$native" "$(echo "$native / $pairs" | bc -l)"
for which in baseline this; do
	so=$base
	[ "$which" = this ] && so=$lib
	while IFS='|' read -r label envs; do
		# shellcheck disable=SC2086
		n=$(ir "$calls" LD_PRELOAD="$so" $quiet $envs)
		printf '%-58s %12s %+10.1f\n' "$which: $label" "$n" "$(echo "($n - $native) / $pairs" | bc -l)"
	done <<'PARTS'
interposition only|INFERSCOPE_MALLOC=0 INFERSCOPE_SYSCALLS=0
+ the malloc counters|INFERSCOPE_SYSCALLS=0
+ the system-call hooks|
PARTS
done
for which in native baseline this; do
	case $which in
	native) n=$(ir 1000) ;;
	baseline) n=$(ir 1000 LD_PRELOAD="$base") ;;
	this) n=$(ir 1000 LD_PRELOAD="$lib") ;;
	esac
	printf '%-58s %12s\n' "$which, 1,000 calls per thread, defaults" "$n"
done
