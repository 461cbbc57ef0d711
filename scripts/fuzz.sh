#!/bin/sh
# Runs the analyzer's libFuzzer targets (tests/fuzz/) for a while each, in the sanitized
# build scripts/sanitize.sh sets up (build-asan/: clang, ASan + UBSan); its `fuzz` test
# suite runs the same targets for 15 s each.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   targets: read-inferscope read-kineto read-bare read-spill read-auto json-scan thresholds
#   (default: all; $FUZZ_SEEDS names a folder of more seeds, e.g. spill files)
# Crashes are written to build-asan/tests/fuzz/artifacts/TARGET/; add each to
# tests/analyzer/data/fuzz/ as a regression.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-120}
[ $# -gt 0 ] && shift
tests=
for t in ${*:-read-inferscope read-kineto read-bare read-spill read-auto json-scan thresholds}; do
	tests="$tests fuzz-$t"
done
scripts/sanitize.sh setup
FUZZ_SECONDS=$secs exec meson test -C "${SANITIZE_BUILD_DIR:-build-asan}" \
	--timeout-multiplier 0 --num-processes 1 --print-errorlogs $tests
