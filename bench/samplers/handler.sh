#!/usr/bin/env bash
# The sampling handler's own account, side by side: for each library given (and each
# round), a CPU-bound C program and the libtorch loop under the preload at HZ, and the
# trace's sampling section: samples, handler_us / samples, handler_median_us, and the
# same for the Python walk (docs/benchmarks.md, "The handler's median"), and the
# handler's system calls per sample (CPU clock reads, Python process_vm_readv). A library
# older than a figure prints -1 for it.
# Usage: bench/samplers/handler.sh ROUNDS HZ LIBINFERSCOPE.so...
set -euo pipefail
rounds=$1 hz=$2
shift 2
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/cpu-bound" "$here/cpu-bound.c"
# an interpreter that imports torch (Debian's python3-torch is /usr/bin/python3's)
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import torch' 2>/dev/null; then
		py=$p
		break
	fi
done
[ -n "$py" ] || { echo "no interpreter imports torch (apt-get install python3-torch)" >&2; exit 1; }
for r in $(seq "$rounds"); do
	for lib in "$@"; do
		for prog in c torch; do
			if [ $prog = c ]; then
				cmd=("$tmp/cpu-bound" 800)
			else
				cmd=("$py" "$here/torch-loop.py")
			fi
			rm -f "$tmp/t.json"
			INFERSCOPE_CPU_SAMPLE=$hz INFERSCOPE_OUTPUT="$tmp/t.json" \
				LD_PRELOAD=$(realpath "$lib") "${cmd[@]}" >/dev/null
			python3 - "$tmp/t.json" "$prog" "$lib" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["trace_metadata"]["sampling"]
n = max(s["samples"], 1)
print("%-6s %-40s samples %4d  handler: mean %7.1f us, median %7.2f us  "
      "Python walk: mean %6.1f us, median %6.2f us  per sample: clock reads %5.2f, "
      "Python reads %5.2f" % (
          sys.argv[2], sys.argv[3][-40:], s["samples"], s["handler_us"] / n,
          s.get("handler_median_us", -1), s["python_walk_us"] / n,
          s.get("python_walk_median_us", -1), s.get("cpu_clock_reads", -n) / n,
          s.get("python_reads", -n) / n))
PY
		done
	done
done
