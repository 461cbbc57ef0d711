#!/usr/bin/env bash
# The flight recorder's cost (issue 14): the host benchmarks' end-to-end workloads and
# the malloc/system-call micro benchmarks, native, default mode and continuous mode side
# by side in one run (this machine is shared and noisy: compare ratios taken together).
# Usage: bench/run-recorder.sh [BUILD_DIR]   (ROUNDS=N, default 7)
set -euo pipefail
build=$(realpath "${1:-build}")
b=$build/bench/host
here=$(dirname "$(realpath "$0")")
lib=$build/preload/libinferscope.so
py=$(python3 -c 'import sys; print(sys.executable)')	# the interpreter, not a shim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rounds=${ROUNDS:-7}
def="INFERSCOPE_OUTPUT=$tmp/trace.json LD_PRELOAD=$lib"
cont="INFERSCOPE_MODE=continuous INFERSCOPE_SEGMENT=1s INFERSCOPE_RETAIN=64M $def"

echo "## malloc+free pair and short system call (best of 5, alternating)"
for i in 1 2 3 4 5; do
	env $def "$b/bench-malloc" | sed 's/^/default /'
	env $cont "$b/bench-malloc" | sed 's/^/continuous /'
	env $def "$b/bench-syscall" 2000000 single | sed 's/^/default /'
	env $cont "$b/bench-syscall" 2000000 single | sed 's/^/continuous /'
	rm -f "$tmp"/trace*
done | awk '{ k = $1 " " $2; if (!(k in best) || $3 < best[k]) best[k] = $3 }
	END { for (k in best) printf "%s %.2f ns\n", k, best[k] }' | sort

end_to_end() {	# title, command (with $D for the scratch directory)
	echo "## $1 (median of $rounds rounds)"
	python3 "$here/host/side-by-side.py" "$rounds" \
		"native=${2//\$D/$tmp}" \
		"default=$def ${2//\$D/$tmp}; rm -f $tmp/trace*" \
		"continuous=$cont ${2//\$D/$tmp}; rm -f $tmp/trace*"
}
end_to_end "C word indexer, line mode" "$b/bench-workload \$D 20 20000 line"
end_to_end "C word indexer, word mode (allocator stress)" "$b/bench-workload \$D 10 20000 word"
end_to_end "Python: JSON, text and file I/O" "$py $b/workload.py \$D 6"
