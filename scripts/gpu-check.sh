#!/usr/bin/env bash
# InferScope on a real NVIDIA GPU: builds the library, builds real CUDA workloads with
# nvcc (vector add, pageable and pinned copies, many tiny kernels, a cuBLAS GEMM), runs a
# small PyTorch model with random weights (nothing downloaded), each under the preload,
# prints the analyzer's report for each, and compares kernel counts and times with what
# CUDA events and torch.profiler measure for the same work; then the PyTorch before/after
# pairs (tests/workloads/torch/) with the model on the GPU. Record what it prints in
# docs/gpu-validation.md and the pairs' rows in docs/causal-pairs.md.
#
#   scripts/gpu-check.sh [OUT_DIR]        (default: ./gpu-check-out)
#   PAIRS_REPEAT=R: runs of each pair's variant per recorder (default 3; each run imports
#   PyTorch and starts CUDA, ~10 s)
#
# Needs: an NVIDIA GPU and driver, the CUDA toolkit (nvcc, cuBLAS), meson, ninja, a C
# compiler; PyTorch with CUDA for the model part (skipped without it); yajl and zlib for
# inferscope-analyze (or INFERSCOPE_ANALYZE naming an analyzer built elsewhere; without
# one the traces are still written and checked, the reports are skipped).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-gpu-check-out}" && cd "${1:-gpu-check-out}" && pwd)
build=${BUILD_DIR:-$top/build-gpu}
status=0
say() { printf '\n=== %s\n' "$*"; }

say "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || {
	echo "no NVIDIA GPU here"; exit 2; }
nvcc --version | tail -1

say "build ($build)"
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dtests=disabled -Dcuda=enabled >"$out/meson.log" 2>&1 ||
		{ cat "$out/meson.log"; exit 1; }
fi
ninja -C "$build" >"$out/ninja.log" 2>&1 || { cat "$out/ninja.log"; exit 1; }
lib=$build/preload/libinferscope.so
analyze=${INFERSCOPE_ANALYZE:-$build/analyzer/inferscope-analyze}
[ -x "$analyze" ] || { echo "inferscope-analyze not built (yajl/zlib missing): reports skipped"; analyze=""; }
echo "library: $lib"

run() { # name, then the command; the trace goes to $out/name.json
	local name=$1; shift
	say "$name: $*"
	env LD_PRELOAD="$lib" INFERSCOPE_OUTPUT="$out/$name.json" INFERSCOPE_DEBUG=1 "$@" \
		>"$out/$name.stdout" 2>"$out/$name.stderr"
	local rc=$?
	cat "$out/$name.stdout"; grep inferscope "$out/$name.stderr" || true
	[ $rc -eq 0 ] || { echo "FAILED with status $rc"; tail -20 "$out/$name.stderr"; status=1; }
	if [ -n "$analyze" ] && [ -f "$out/$name.json" ]; then
		"$analyze" "$out/$name.json" | tee "$out/$name.md" || { echo "ANALYZER FAILED"; status=1; }
	fi
}

say "compile CUDA workloads"
# the runtime as a shared library, so the interposer sees the calls; gemm keeps nvcc's
# default static runtime, which only CUPTI sees (as with cuBLAS's own runtime)
nvcc -O2 -cudart shared -o "$out/copies-and-kernels" "$top/scripts/gpu-check/copies-and-kernels.cu" || status=1
nvcc -O2 -o "$out/gemm" "$top/scripts/gpu-check/gemm.cu" -lcublas || status=1

run copies "$out/copies-and-kernels" 2000
python3 "$top/scripts/gpu-check/compare.py" copies "$out/copies.json" "$out/copies.stdout" || status=1
run gemm "$out/gemm"

if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	run model python3 "$top/scripts/gpu-check/model.py"
	if [ -n "$analyze" ] && [ -f "$out/model.json" ]; then
		say "model, steady state only (--window-scope measured: imports and warm-up left out)"
		"$analyze" --window-scope measured "$out/model.json" | tee "$out/model-steady.md" ||
			{ echo "ANALYZER FAILED"; status=1; }
	fi
	say "torch.profiler reference run (no preload: one CUPTI subscriber per process)"
	python3 "$top/scripts/gpu-check/model.py" --profile "$out/model-profile.json" || status=1
	python3 "$top/scripts/gpu-check/compare.py" model "$out/model.json" "$out/model-profile.json" || status=1
	if [ -n "$analyze" ]; then
		say "before/after pairs with CUDA (docs/causal-pairs.md, \"Pairs on PyTorch\")"
		# each variant recorded twice, by the preload and by torch.profiler; the rows go
		# to docs/causal-pairs.md
		python3 "$top/tests/workloads/torch/run_pairs.py" --cuda --repeat "${PAIRS_REPEAT:-3}" \
			--analyze "$analyze" --preload "$lib" --keep "$out/torch-pairs" \
			--table "$out/torch-pairs.md" || status=1
	fi
else
	say "PyTorch with CUDA not available: model part skipped"
fi

say "done: traces and reports in $out (status $status)"
exit $status
