#!/usr/bin/env bash
# Host benchmarks, side by side in one run (this machine is shared and noisy: compare
# the ratios taken together, not figures from different runs).
# Usage: bench/run-host.sh [BUILD_DIR]   (ROUNDS=N for the end-to-end rounds, default 7)
set -euo pipefail
build=$(realpath "${1:-build}")
b=$build/bench/host
here=$(dirname "$(realpath "$0")")
lib=$build/preload/libinferscope.so
idle=$b/libidle-thread.so
py=$(python3 -c 'import sys; print(sys.executable)')	# the interpreter, not a shim
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rounds=${ROUNDS:-7}
ours="INFERSCOPE_OUTPUT=$tmp/trace.json LD_PRELOAD=$lib"

echo "## malloc+free pair, 64 bytes, default sampling (best of 5, alternating)"
for i in 1 2 3 4 5; do
	"$b/bench-malloc" | sed 's/^/native /'
	env $ours "$b/bench-malloc" | sed 's/^/inferscope /'
done | awk '{ if (!($1 in best) || $3 < best[$1]) best[$1] = $3 }
	END { printf "native %.2f ns, inferscope %.2f ns, ratio %.2fx\n", best["native"],
	      best["inferscope"], best["inferscope"] / best["native"] }'

echo "## short system call: read(2) of 1 byte from /dev/zero; uncontended mutex pair (best of 5)"
for mode in single threaded; do	# the program itself single- or multi-threaded
	for i in 1 2 3 4 5; do
		"$b/bench-syscall" 2000000 $mode | sed 's/^/native /'
		env $ours "$b/bench-syscall" 2000000 $mode | sed 's/^/inferscope /'
	done | awk -v mode=$mode '{ k = $1 " " $2; if (!(k in best) || $3 < best[k]) best[k] = $3 }
		END { printf "%s baseline: syscall %.1f -> %.1f ns (+%.1f), mutex pair %.1f -> %.1f ns (+%.1f)\n",
		      mode, best["native short_syscall_ns"], best["inferscope short_syscall_ns"],
		      best["inferscope short_syscall_ns"] - best["native short_syscall_ns"],
		      best["native mutex_pair_ns"], best["inferscope mutex_pair_ns"],
		      best["inferscope mutex_pair_ns"] - best["native mutex_pair_ns"] }'
done

echo "## what each part of a hook costs (bench-hook-parts, no preload, best of 5)"
"$b/bench-hook-parts"

echo "## allocator churn, 2 threads x 5 M malloc/free + a read(2) per 64 (median of $rounds rounds)"
python3 "$here/host/side-by-side.py" "$rounds" \
	"native=$b/bench-churn" \
	"idle thread only=LD_PRELOAD=$idle $b/bench-churn" \
	"inferscope=$ours $b/bench-churn" \
	"inferscope, no CPU samples=INFERSCOPE_CPU_SAMPLE=0 $ours $b/bench-churn" \
	"heaptrack=heaptrack -o $tmp/heaptrack $b/bench-churn; rm -f $tmp/heaptrack*"
echo "## the same with 1,000 calls per thread: the library's fixed cost (start, exit, trace)"
python3 "$here/host/side-by-side.py" "$rounds" \
	"native=$b/bench-churn 1000" \
	"inferscope=$ours $b/bench-churn 1000" \
	"inferscope, no CPU samples=INFERSCOPE_CPU_SAMPLE=0 $ours $b/bench-churn 1000"

lt_filter='malloc+free+calloc+realloc+read+write+open+open64+close@*'
end_to_end() {	# title, command (with $D for the scratch directory), rounds
	local title=$1 cmd=$2 n=$3
	echo "## $title (median of $n rounds)"
	python3 "$here/host/side-by-side.py" "$n" \
		"native=${cmd//\$D/$tmp}" \
		"idle thread only=LD_PRELOAD=$idle ${cmd//\$D/$tmp}" \
		"inferscope=$ours ${cmd//\$D/$tmp}" \
		"heaptrack=heaptrack -o $tmp/heaptrack ${cmd//\$D/$tmp}; rm -f $tmp/heaptrack*" \
		"uftrace --nest-libcall=rm -rf $tmp/uft; uftrace record --force --nest-libcall -d $tmp/uft ${cmd//\$D/$tmp}; rm -rf $tmp/uft"
}
slow_tools() {	# ltrace is 100-1000x slower: a smaller input, its own native baseline
	local title=$1 cmd=$2
	echo "## $title, ltrace -e '$lt_filter' (3 rounds)"
	python3 "$here/host/side-by-side.py" 3 \
		"native=${cmd//\$D/$tmp}" \
		"inferscope=$ours ${cmd//\$D/$tmp}" \
		"ltrace=ltrace -o /dev/null -e '$lt_filter' ${cmd//\$D/$tmp}"
}

end_to_end "C word indexer, line mode" "$b/bench-workload \$D 20 20000 line" "$rounds"
end_to_end "C word indexer, word mode (allocator stress)" "$b/bench-workload \$D 10 20000 word" "$rounds"
end_to_end "Python: JSON, text and file I/O" "$py $b/workload.py \$D 6" "$rounds"
slow_tools "C word indexer, line mode, 1/10 of the input" "$b/bench-workload \$D 2 20000 line"
slow_tools "Python, 1/6 of the input" "$py $b/workload.py \$D 1"
