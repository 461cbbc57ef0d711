#!/usr/bin/env bash
# The sanitizer run (.ci/run's last phase): a build of its own, build-asan/ (clang,
# AddressSanitizer + UndefinedBehaviorSanitizer, the libFuzzer targets), in which the
# unit and analyzer suites run and each fuzz target replays its corpus, then tries new
# inputs for FUZZ_SECONDS (15 by default). Any sanitizer report fails the run. Only what
# these suites need is built (meson test builds the selected tests' targets).
# Needs clang and libclang-rt-14-dev (./scripts/setup.sh test installs them).
# Usage: scripts/sanitize.sh [test|setup] [MESON TEST ARGS...]
#   setup - configure build-asan/ only (scripts/fuzz.sh uses it)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}
[ $# -gt 0 ] && shift
build=${SANITIZE_BUILD_DIR:-build-asan}
# Without the CUDA hooks: their references to libcudart's versioned symbols do not link
# into a sanitized shared library, and no suite run here needs them.
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" --buildtype=debugoptimized -Dfuzz=true -Dcuda=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false
fi
[ "$mode" = setup ] && exit 0
# Every report is an error (UBSan would print and go on), with the stack that led to it.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
# Sanitized code runs 2-3x slower: the suites' own time limits, tripled (analyzer-parallel
# took 293 s of its 300 under ASan on a loaded 2-core machine).
exec meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 3 \
	--suite unit --suite analyzer --suite fuzz "$@"
