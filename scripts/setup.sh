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

# Debian packages, in two lists. The build and the demo need only the first: a fresh
# machine runs `setup.sh demo` in about a minute. The tests need both.
build_packages=(
	gcc libc6-dev pkg-config meson ninja-build binutils
	libyajl-dev zlib1g-dev python3
)
# The tests, and the tools they compare with or check against.
test_packages=(
	libcriterion-dev libunwind8 python3-jsonschema
	libjemalloc2 libtcmalloc-minimal4 clang-format
	stress-ng libpython3.11-testsuite
	libprotobuf-c-dev protobuf-c-compiler
	prometheus golang-go python3-yaml
	elfutils # eu-addr2line: the line tables' reference where llvm-addr2line is absent
	chromium # the HTML report rendered headless (tests/analyzer: html_renders_in_chromium)
	lintian  # the Debian package's check (scripts/package.sh, tests/package)
	strace   # the exact counts of a real program's calls (tests/e2e/test-host-programs.c)
	libc6-dbg # a real compressed line table (tests/unit/test-symbolize.c: lines by unit)
	# the sanitizer build and the fuzz targets (scripts/sanitize.sh, scripts/fuzz.sh,
	# .ci/run's last phase): clang with its sanitizer and libFuzzer runtimes
	clang libclang-rt-14-dev
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo=sudo
fi
updated=false
# Installs the packages of "$@" that are missing (apt's lists refreshed once).
install_missing() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	echo "setup: installing ${missing[*]}"
	if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then
		echo "setup: need root or sudo to install ${missing[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! $updated; then
		$sudo apt-get update -qq
		updated=true
	fi
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
	# The tests start their own Prometheus on a loopback port: the package's system
	# service stays off (policy-rc.d keeps it from starting in containers; this keeps
	# it from starting at the next boot elsewhere).
	if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
		$sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
	fi
}

install_missing "${build_packages[@]}"
if [ "$mode" = test ]; then
	install_missing "${test_packages[@]}"
	# Where the distribution has them: the PyTorch CPU-loop test (tests/samplers) and
	# the syntax check of the HTML report's script (tests/analyzer) skip without them.
	optional=()
	for p in python3-torch nodejs; do
		if apt-cache show "$p" >/dev/null 2>&1; then
			optional+=("$p")
		fi
	done
	install_missing "${optional[@]}"
	# a build dir configured by `setup.sh demo` found no Criterion: look again
	if [ -f "$build/build.ninja" ]; then
		meson setup --reconfigure "$build" >/dev/null
	fi
fi

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" --buildtype=debugoptimized
fi
if [ "$mode" = demo ]; then
	# The demo's programs only: the launcher, the library, the analyzer and the example
	# (scripts/demo.sh; the example needs the CUDA toolkit). The watcher and the
	# benchmarks come with `build` and `test`.
	demo_targets=(launcher/inferscope preload/libinferscope.so analyzer/inferscope-analyze)
	if ninja -C "$build" -t targets all | grep -q '^tests/workloads/wl-cpu-preprocess:'; then
		demo_targets+=(tests/workloads/wl-cpu-preprocess)
	fi
	ninja -C "$build" "${demo_targets[@]}"
else
	ninja -C "$build"
fi

case "$mode" in
build) ;;
test)
	# speedscope, the viewer the exports are checked in (tests/analyzer/test-exports.c),
	# from the npm registry into build-viewers/, which every build dir's tests share
	# (the sanitizer build's too); Debian's nodejs has no npm of its own.
	if [ ! -f build-viewers/node_modules/speedscope/package.json ]; then
		command -v npm >/dev/null || install_missing npm
		npm install --no-audit --no-fund --silent --prefix build-viewers speedscope@1.25.0
	fi
	meson test -C "$build" --print-errorlogs --num-processes "$(nproc)"
	;;
demo)
	exec "$top/scripts/demo.sh" "$build"
	;;
esac
