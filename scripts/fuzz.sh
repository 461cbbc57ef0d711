#!/bin/sh
# Builds the analyzer's libFuzzer targets (tests/fuzz/, clang -fsanitize=fuzzer,address,
# undefined) and runs each for a while. Not part of `meson test`.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   targets: read-inferscope read-kineto read-bare read-spill read-auto json-scan thresholds
#   (default: all; read-spill seeds from $FUZZ_SPILL_SEEDS, a folder of spill files)
# Crashes are written to build-fuzz/artifacts/; add each as a regression test.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-120}
[ $# -gt 0 ] && shift
targets=${*:-read-inferscope read-kineto read-bare read-spill read-auto json-scan thresholds}
out=build-fuzz
mkdir -p "$out/artifacts"
[ -f "$out/isc-config.h" ] || printf '#define ISC_VERSION "fuzz"\n#define ISC_HAVE_CUDA 0\n' \
	> "$out/isc-config.h"
srcs="$(find analyzer -name '*.c' ! -path analyzer/main.c | sort) $(ls format/*.c common/*.c)"
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-D_GNU_SOURCE -std=gnu11 -I . -I include -I $out -I /usr/include/yajl"
libs="-lyajl -lz -lm -lpthread"
build() {	# name, main source, extra flags
	[ "$out/fuzz-$1" -nt "$2" ] && return 0
	clang $cflags $3 -o "$out/fuzz-$1" "$2" $srcs $libs
}
corpus() {	# name, seed files...
	name=$1
	shift
	mkdir -p "$out/corpus-$name"
	for f in "$@"; do
		[ -f "$f" ] && [ "$(stat -c %s "$f")" -le 262144 ] && cp "$f" "$out/corpus-$name/" || true
	done
}
for t in $targets; do
	case $t in
	read-inferscope) build "$t" tests/fuzz/fuzz-read.c '-DFUZZ_FORMAT="inferscope"'
		corpus "$t" tests/analyzer/data/validate/*/*.json tests/analyzer/data/scenarios/*.json ;;
	read-kineto) build "$t" tests/fuzz/fuzz-read.c '-DFUZZ_FORMAT="kineto"'
		corpus "$t" tests/analyzer/data/kineto/*.gz ;;
	read-bare) build "$t" tests/fuzz/fuzz-read.c '-DFUZZ_FORMAT="bare"'
		corpus "$t" tests/analyzer/data/bare/*.json ;;
	read-spill) build "$t" tests/fuzz/fuzz-read.c '-DFUZZ_FORMAT="spill"'
		corpus "$t" ${FUZZ_SPILL_SEEDS:-/nonexistent}/*.spill ;;
	read-auto) build "$t" tests/fuzz/fuzz-read.c ''
		corpus "$t" tests/analyzer/data/validate/good/*.json tests/analyzer/data/kineto/*.gz ;;
	json-scan) build "$t" tests/fuzz/fuzz-json-scan.c ''
		corpus "$t" tests/analyzer/data/validate/*/*.json ;;
	thresholds) build "$t" tests/fuzz/fuzz-thresholds.c ''
		corpus "$t" tests/analyzer/data/thresholds/*.conf ;;
	*) echo "fuzz.sh: unknown target $t" >&2; exit 2 ;;
	esac
	echo "fuzz.sh: $t for ${secs}s"
	"$out/fuzz-$t" -max_total_time="$secs" -max_len=262144 -rss_limit_mb=2048 \
		-timeout=20 -artifact_prefix="$out/artifacts/$t-" -print_final_stats=1 \
		"$out/corpus-$t" 2>&1 | tail -n 12
done
