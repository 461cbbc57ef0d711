#!/usr/bin/env bash
# The Debian package as a user gets it: scripts/package.sh builds it, dpkg-deb unpacks
# it into a scratch root (dpkg -i would need root and change this machine), and the
# unpacked tree is used as installed: the library preloaded by its file name, the
# launcher, `import inferscope` under Debian's python3 and every other interpreter found,
# then lintian, whose every remaining tag must be explained in docs/packaging.md.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
deb=$("$ISC_SRC/scripts/package.sh" "$work/out" | tail -n 1)
version=$(sed -n "s/^\tversion: '\(.*\)',$/\1/p" "$ISC_SRC/meson.build")
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ "$(basename "$deb")" = "inferscope_${version}_$arch.deb" ] || fail "named $deb"

info=$(dpkg-deb --field "$deb" Package Version Architecture Depends)
grep -q "^Package: inferscope$" <<<"$info" || fail "control: $info"
grep -q "^Depends: .*libc6" <<<"$info" || fail "no shared-library dependencies: $info"

root=$work/root
dpkg-deb -x "$deb" "$root"
lib=$root/usr/lib/$multiarch
for f in "$lib/libinferscope.so" usr/bin/inferscope usr/bin/inferscope-analyze \
	usr/bin/inferscope-watch usr/share/man/man1/inferscope-analyze.1.gz \
	usr/share/man/man7/libinferscope.7.gz usr/share/doc/inferscope/rules.md \
	usr/share/doc/inferscope/copyright usr/include/inferscope/inferscope.h \
	usr/lib/python3/dist-packages/inferscope/__init__.py; do
	case $f in /*) p=$f ;; *) p=$root/$f ;; esac
	[ -f "$p" ] || fail "$f is not in the package"
done
# the manuals cite the documents where the package puts them
zcat "$root/usr/share/man/man1/inferscope-analyze.1.gz" | grep -q "/usr/share/doc/inferscope/rules.md" ||
	fail "inferscope-analyze(1) does not cite /usr/share/doc/inferscope/rules.md"

# LD_PRELOAD by file name, the way the package installs it (the loader's own
# directories: here through LD_LIBRARY_PATH, installed through the ld.so cache).
cd "$work"
maps=$(LD_LIBRARY_PATH=$lib LD_PRELOAD=libinferscope.so /bin/cat /proc/self/maps)
grep -q "$lib/libinferscope.so" <<<"$maps" || fail "LD_PRELOAD=libinferscope.so did not load the package's library"
LD_LIBRARY_PATH=$lib LD_PRELOAD=libinferscope.so INFERSCOPE_OUTPUT=$work/preloaded.json \
	/usr/bin/python3 -c 'import json; json.dumps(list(range(100000)))'
[ -s "$work/preloaded.json" ] || fail "the preloaded library wrote no trace"

# The launcher finds the library and the analyzer of its own tree.
out=$("$root/usr/bin/inferscope" run -o "$work/run.json" -- /usr/bin/python3 -c 'sum(range(10**6))')
grep -q "# InferScope report" <<<"$out" || fail "inferscope run printed no report: $out"
[ -s "$work/run.json" ] || fail "inferscope run wrote no trace"

# Debian's python3 searches /usr/lib/python3/dist-packages by itself; every interpreter
# finds the helper through /usr/share/inferscope/python.
/usr/bin/python3 -c 'import sys; sys.exit("/usr/lib/python3/dist-packages" not in sys.path)' ||
	fail "Debian's python3 does not search /usr/lib/python3/dist-packages"
PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -s -c \
	'import inferscope; assert not inferscope.active()' || fail "import inferscope (Debian's python3)"
IFS=: read -r -a pythons <<<"$ISC_PYTHONS"
[ ${#pythons[@]} -gt 0 ] || fail "no interpreter to try"
for py in "${pythons[@]}"; do
	got=$(PYTHONPATH=$root/usr/share/inferscope/python "$py" -s -c \
		'import inferscope, os; print(os.path.realpath(inferscope.__file__))') ||
		fail "import inferscope under $py"
	[ "$got" = "$(realpath "$root/usr/lib/python3/dist-packages/inferscope/__init__.py")" ] ||
		fail "$py imported $got"
done

# lintian: every tag it still reports is explained in docs/packaging.md.
command -v lintian >/dev/null || fail "lintian is missing: scripts/setup.sh test installs it"
tags=$(lintian --no-tag-display-limit "$deb" 2>&1 | awk -F': ' '/^[EWI]: /{split($3, t, " "); print t[1]}' | sort -u)
for t in $tags; do
	grep -q "\`$t\`" "$ISC_SRC/docs/packaging.md" || fail "lintian tag $t is not explained in docs/packaging.md"
done
echo "ok: $(basename "$deb"), lintian tags explained: ${tags:-none}"
