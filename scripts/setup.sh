#!/usr/bin/env bash
# One command for a fresh Debian machine: install what is missing, build, then
#   demo  - profile the bundled example and print its report (the default)
#   test  - run the whole test suite (what CI runs)
#   build - stop after building
# Runs as root or through sudo for the package step only. Nothing is downloaded
# besides Debian packages. The CUDA toolkit is used when found ($CUDA_HOME or
# /usr/local/cuda); without it the CUDA parts are left out of the build.
set -euo pipefail

mode=${1:-demo}
case "$mode" in
demo|test|build) ;;
-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "usage: $0 [demo|test|build]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD_DIR:-build}

# Debian packages: the build, the tests, and the tools the benchmarks compare with.
packages=(
	gcc libc6-dev pkg-config meson ninja-build binutils
	libyajl-dev zlib1g-dev python3
	libcriterion-dev libunwind8 python3-jsonschema
	libjemalloc2 libtcmalloc-minimal4 clang-format
	stress-ng libpython3.11-testsuite
	libprotobuf-c-dev protobuf-c-compiler
	prometheus golang-go python3-yaml
	elfutils # eu-addr2line: the line tables' reference where llvm-addr2line is absent
)

# The sanitizer build and the fuzz targets (scripts/sanitize.sh, scripts/fuzz.sh,
# .ci/run's last phase): clang with its sanitizer and libFuzzer runtimes.
packages+=(clang libclang-rt-14-dev)

# Where the distribution has them: the PyTorch CPU-loop test (tests/samplers) and the
# syntax check of the HTML report's script (tests/analyzer) skip without them.
for p in python3-torch nodejs; do
	if apt-cache show "$p" >/dev/null 2>&1; then
		packages+=("$p")
	fi
done

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
		sudo=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
	# The tests start their own Prometheus on a loopback port: the package's system
	# service stays off (policy-rc.d keeps it from starting in containers; this keeps
	# it from starting at the next boot elsewhere).
	if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
		$sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
fi

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" --buildtype=debugoptimized
fi
ninja -C "$build"

case "$mode" in
build) ;;
test)
	meson test -C "$build" --print-errorlogs --num-processes "$(nproc)"
	;;
demo)
	exec "$top/scripts/demo.sh" "$build"
	;;
esac
