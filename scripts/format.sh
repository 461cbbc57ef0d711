#!/usr/bin/env bash
# Formats the C sources with .clang-format, or checks them (--check: lists the files
# that differ and exits 1). Usage: scripts/format.sh [--check] [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = "--check" ]; then
	check=1
	shift
fi
command -v clang-format >/dev/null || { echo "format.sh: clang-format is not installed" >&2; exit 2; }
if [ $# -eq 0 ]; then
	mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu')
else
	files=("$@")
fi
if [ $check -eq 0 ]; then
	clang-format -i "${files[@]}"
	exit 0
fi
# One process for the whole tree (fast); only when it finds something, one per file to
# name the files that differ.
if clang-format --dry-run -Werror "${files[@]}" >/dev/null 2>&1; then
	exit 0
fi
bad=0
for f in "${files[@]}"; do
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "$f"
		bad=1
	fi
done
exit $bad
