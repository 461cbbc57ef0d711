#!/usr/bin/env bash
# Builds the Debian package inferscope_VERSION_ARCH.deb with dpkg-deb (no debhelper):
#
#   scripts/package.sh [OUTDIR]      (default: the current directory)
#
# A build of its own ($PKG_BUILD_DIR, default build-deb/: --prefix=/usr, the multiarch
# libdir, no tests) is installed into a staging root, then laid out as Debian wants it:
# man pages and the changelog compressed, copyright and changelog in
# /usr/share/doc/inferscope, binaries stripped, the dependencies computed by
# dpkg-shlibdeps, and the loader's cache refreshed by dpkg's ldconfig trigger.
# What goes where (docs/packaging.md):
#   /usr/lib/<multiarch>/libinferscope.so      LD_PRELOAD=libinferscope.so finds it
#   /usr/bin/inferscope, inferscope-analyze, inferscope-watch
#   /usr/lib/python3/dist-packages/inferscope  import inferscope (Debian's python3)
#   /usr/share/inferscope/python               PYTHONPATH for every other interpreter
#   /usr/share/man, /usr/share/doc/inferscope  the manuals and the documents they cite
# Needs dpkg-dev (dpkg-shlibdeps, dpkg-architecture); checked by lintian in the tests.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-.}" && cd "${1:-.}" && pwd)
build=${PKG_BUILD_DIR:-$top/build-deb}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$top" --prefix=/usr --libdir="lib/$multiarch" \
		--buildtype=debugoptimized -Dtests=disabled >/dev/null
fi
# what is installed, nothing else (the benchmarks are built by default)
installed=$(meson introspect "$build" --targets | python3 -c '
import json, os, sys
print(" ".join(os.path.relpath(f, sys.argv[1]) for t in json.load(sys.stdin)
               if t["installed"] for f in t["filename"]))' "$build")
# shellcheck disable=SC2086 # target names, split on purpose
ninja -C "$build" $installed >/dev/null
version=$(meson introspect "$build" --projectinfo |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')

# Who built it, as Debian's tools ask ($DEBFULLNAME, $DEBEMAIL), else the tree's last author.
name=${DEBFULLNAME:-$(git -C "$top" log -1 --format=%an 2>/dev/null || echo InferScope)}
mail=${DEBEMAIL:-$(git -C "$top" log -1 --format=%ae 2>/dev/null || echo "root@$(hostname -f)")}
maintainer="$name <$mail>"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
DESTDIR=$root meson install -C "$build" --no-rebuild --quiet

# Debian's layout: compressed manuals, the package's documents with its copyright and
# changelog, stripped binaries (the symbols the loader needs stay).
find "$root/usr/share/man" -type f -exec gzip -9n {} +
doc=$root/usr/share/doc/inferscope
install -d "$doc"
year=$(date -u +%Y)
cat >"$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: inferscope

Files: *
Copyright: $year InferScope contributors
License: MIT

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of
 this software and associated documentation files (the "Software"), to deal in
 the Software without restriction, including without limitation the rights to
 use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of
 the Software, and to permit persons to whom the Software is furnished to do so,
 subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all
 copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS
 FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR
 COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER
 IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
 CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
COPYRIGHT
date=$(date -u -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}")
printf 'inferscope (%s) unstable; urgency=medium\n\n  * Built from the source tree by scripts/package.sh.\n\n -- %s  %s\n' \
	"$version" "$maintainer" "$date" | gzip -9n >"$doc/changelog.gz"
find "$root/usr/bin" "$root/usr/lib/$multiarch" -type f \( -perm -u+x -o -name '*.so' \) \
	-exec strip --strip-unneeded --remove-section=.comment --remove-section=.note {} +
chmod 0644 "$root/usr/lib/$multiarch/libinferscope.so"

# Control: the shared-library dependencies of the binaries, found by dpkg-shlibdeps
# (which reads debian/control: a minimal one beside the staging root).
install -d "$stage/debian" "$root/DEBIAN"
printf 'Source: inferscope\n\nPackage: inferscope\nArchitecture: any\n' >"$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e"$root/usr/bin/inferscope" \
	-e"$root/usr/bin/inferscope-analyze" -e"$root/usr/bin/inferscope-watch" \
	-e"$root/usr/lib/$multiarch/libinferscope.so" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: inferscope
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Suggests: python3
Section: devel
Priority: optional
Description: profiler that says where GPU inference time goes
 InferScope records a process with no change to its code: LD_PRELOAD of
 libinferscope.so intercepts the CUDA runtime, the malloc family and the libc
 system-call wrappers, takes the GPU timeline from CUPTI, samples CPU stacks,
 and writes a trace when the process ends. inferscope-analyze attributes the
 time to CPU preprocessing, copies, GPU compute, runtime overhead or idle,
 gives a verdict from the run's critical path and suggests what to change,
 with the gain a re-timing predicts. inferscope run profiles a command and
 prints the report; a Python helper adds annotations.
CONTROL
echo 'activate-noawait ldconfig' >"$root/DEBIAN/triggers"
(cd "$root" && find usr -type f -exec md5sum {} + | sort -k2) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/triggers" "$root/DEBIAN/md5sums"
deb=$out/inferscope_${version}_$arch.deb
dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >/dev/null
echo "$deb"
