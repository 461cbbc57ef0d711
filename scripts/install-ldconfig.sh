#!/bin/sh
# SPDX-License-Identifier: MIT
# Run by `meson install` (meson.add_install_script): refresh the dynamic loader's cache,
# so that LD_PRELOAD=libinferscope.so finds the library by its file name. Staged
# installs (DESTDIR) and installs by other users than root leave the cache alone: it is
# the system's, and packagers run ldconfig themselves.
set -eu
libdir=$1
[ -z "${DESTDIR:-}" ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "inferscope: not root: run ldconfig as root, or set LD_LIBRARY_PATH=$libdir," \
		"so that LD_PRELOAD=libinferscope.so finds the library"
	exit 0
fi
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
"$ldconfig"
if ! "$ldconfig" -p | grep -q "libinferscope.so .*=> $libdir/libinferscope.so\$"; then
	echo "inferscope: $libdir is not in the loader's search path (/etc/ld.so.conf.d):" \
		"use LD_PRELOAD=$libdir/libinferscope.so or add the directory there"
fi
