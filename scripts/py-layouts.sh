#!/bin/sh
# Prints the rows of preload/samplers/py-layouts.c, one per CPython found (its headers
# are needed: Debian's python3-dev, or a pyenv build).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for py in /usr/bin/python3 /root/.pyenv/versions/3.*/bin/python3; do
	[ -x "$py" ] || continue
	inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	[ -f "$inc/Python.h" ] || { echo "# $py: no headers" >&2; continue; }
	if cc -I"$inc" -I"$inc/internal" "$here/py-layouts.c" -o "$tmp/l" 2>"$tmp/err"; then
		printf '%s\t# %s\n' "$("$tmp/l")" "$py"
	else
		echo "# $py: $(head -1 "$tmp/err")" >&2
	fi
done
