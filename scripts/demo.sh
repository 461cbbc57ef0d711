#!/usr/bin/env bash
# The main job on a bundled example: profile an inference loop under the preload with
# the launcher, then print the analyzer's report. Called by `scripts/setup.sh demo`.
#
#   scripts/demo.sh [BUILD_DIR]
#
# With the CUDA toolkit the example is a tokenise-then-infer loop on the simulated GPU
# (tests/workloads/c/cpu-preprocess.c: the report should say cpu_bound and point at
# the "tokenize" scope); without it, a CPU-only Python request loop (examples/tokenize.py).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
out=${DEMO_DIR:-$top/demo-out}
mkdir -p "$out"

launcher=$build/launcher/inferscope
example=$build/tests/workloads/wl-cpu-preprocess
if [ -x "$example" ]; then
	what="a tokenise-then-infer loop on the simulated GPU (tests/workloads/c/cpu-preprocess.c)"
	cmd=("$example")
else
	what="a CPU-only Python request loop (examples/tokenize.py)"
	cmd=(python3 "$top/examples/tokenize.py")
fi

echo "InferScope demo: profiling $what"
echo "  $launcher run -o $out/trace.json -- ${cmd[*]}"
echo
"$launcher" run -o "$out/trace.json" --report "$out/report.md" -- "${cmd[@]}"
echo
echo "trace:  $out/trace.json"
echo "report: $out/report.md"
echo
cat "$out/report.md"
