#!/usr/bin/env bash
# The main job on a bundled example: profile an inference loop under the preload with
# the launcher, then print the analyzer's report. Called by `scripts/setup.sh demo`.
#
#   scripts/demo.sh [BUILD_DIR]          the report of the bundled example
#   scripts/demo.sh gate [BUILD_DIR]     a CI gate failing on a regression
#
# With the CUDA toolkit the example is a tokenise-then-infer loop on the simulated GPU
# (tests/workloads/c/cpu-preprocess.c: the report should say cpu_bound and point at
# the "tokenize" scope); without it, a CPU-only Python request loop (examples/tokenize.py).
#
# The gate example profiles tests/e2e/example-serve.c twice, as CI would on the main
# branch and on a pull request that dropped pinned memory, then gates the second run
# on the first: the budgets of gpu_compute and h2d_copy fail and the exit status is 1.
# Without the toolkit it gates the recorded traces of the same two runs
# (tests/e2e/data/).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mode=report
if [ "${1:-}" = gate ]; then
	mode=gate
	shift
fi
build=$(cd "${1:-$top/build}" && pwd)
out=${DEMO_DIR:-$top/demo-out}
mkdir -p "$out"

launcher=$build/launcher/inferscope

gate() {
	local example=$build/tests/e2e/example-serve main pr
	mkdir -p "$out/main" "$out/pr"
	if [ -x "$example" ]; then
		echo "InferScope gate demo: profiling tests/e2e/example-serve.c on the simulated GPU"
		echo "  main branch:  $launcher run --no-report -o $out/main/trace.json -- example-serve"
		"$launcher" run --no-report -o "$out/main/trace.json" -- "$example"
		echo "  pull request: $launcher run --no-report -o $out/pr/trace.json -- example-serve --pageable"
		"$launcher" run --no-report -o "$out/pr/trace.json" -- "$example" --pageable
		main=$out/main/trace.json
		pr=$out/pr/trace.json
	else
		echo "InferScope gate demo: the recorded traces of tests/e2e/example-serve.c (no CUDA toolkit)"
		main=$top/tests/e2e/data/serve-main.json.gz
		pr=$top/tests/e2e/data/serve-pageable.json.gz
	fi
	# what CI keeps from the main branch: the analysis, as an artifact
	"$launcher" analyze -f json -o "$out/main/analysis.json" "$main"
	echo
	echo "  $launcher analyze --baseline main/analysis.json --check 'bottleneck==gpu_bound' \\"
	echo "      --junit pr/gate.xml --gate-summary pr/gate.md -f json -o pr/analysis.json pr/trace.json"
	set +e
	"$launcher" analyze --baseline "$out/main/analysis.json" --check 'bottleneck==gpu_bound' \
		--junit "$out/pr/gate.xml" --gate-summary "$out/pr/gate.md" \
		-f json -o "$out/pr/analysis.json" "$pr"
	local status=$?
	set -e
	echo
	cat "$out/pr/gate.md"
	echo "exit status $status (1: the gate failed, as it should on this regression)"
	echo "JUnit: $out/pr/gate.xml"
	[ $status -eq 1 ]
}

if [ $mode = gate ]; then
	gate
	exit 0
fi

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
