#!/bin/sh
# One libFuzzer target (the fuzz suite, scripts/fuzz.sh): its seeds (files, or folders
# read recursively; up to 256 KiB each) replayed, then new inputs until FUZZ_SECONDS
# (default 15) have passed in all. Fails (libFuzzer's status) on a crash, a leak, a
# sanitizer report, an input slower than 60 s or over 2 GiB; the input is kept as
# ARTIFACTS/crash-*, to be added to tests/analyzer/data/fuzz/ as a regression.
# Usage: run-fuzz.sh TARGET ARTIFACTS SEED...   ($FUZZ_SEEDS: a folder of more seeds)
set -eu
exe=$1
art=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/isc-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$art"
i=0
for s in "$@" ${FUZZ_SEEDS:-}; do
	for f in $(find "$s" -type f -size -257k | sort); do
		i=$((i + 1))
		cp "$f" "$work/corpus/$i-$(basename "$f")"
	done
done
echo "run-fuzz: $(basename "$exe"): $i seeds, ${FUZZ_SECONDS:-15} s"
# UBSan's reports are errors: without halt_on_error one would be printed and passed.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
exec "$exe" -max_total_time="${FUZZ_SECONDS:-15}" -max_len=262144 -rss_limit_mb=2048 \
	-timeout=60 -artifact_prefix="$art/" -print_final_stats=1 "$work/corpus"
