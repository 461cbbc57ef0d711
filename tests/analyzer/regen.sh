#!/bin/sh
# Regenerates the golden reports of tests/analyzer/golden/ from the traces in
# tests/analyzer/data/. Usage: tests/analyzer/regen.sh [BUILD_DIR]   (default: build)
# Review the diff before committing: a golden change is a behaviour change.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
analyze=$build/analyzer/inferscope-analyze
[ -x "$analyze" ] || { echo "regen.sh: $analyze not built" >&2; exit 2; }
cd "$here/data"
# Volatile fields: only the analyzer's version (paths are relative to data/).
normalise() { sed -e 's/inferscope-analyze [0-9][0-9.]*/inferscope-analyze VERSION/'; }
for t in scenarios/*.json kineto/simple_add_a100.pt.trace.json.gz; do
	name=$(basename "$t"); name=${name%%.*}
	"$analyze" "$t" | normalise > "$here/golden/$name.md"
done
for t in workloads/*.json.gz; do
	name=$(basename "$t" .json.gz)
	"$analyze" "$t" | normalise > "$here/golden/wl-$name.md"
done
echo "regen.sh: goldens written to $here/golden"
