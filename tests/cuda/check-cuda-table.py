#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The interposed CUDA functions against what the toolkit's libcudart exports.

  check-cuda-table.py FUNCTIONS_TXT EXCLUDED_TXT LIBINFERSCOPE_SO CUDA_LIBDIR

Every cuda* and __cuda* function libcudart exports is either interposed (listed in
FUNCTIONS_TXT, the build's table of hand-written and generated hooks) or matched by a
pattern of EXCLUDED_TXT, never both; each exclusion pattern matches something and
has a reason; every function of the table is exported by libinferscope.so. The
runtime's symbols are read with nm -D from every CUDA_LIBDIR/libcudart.so*. Exits 0
when all holds, 77 (skipped) when the build found no toolkit libraries, 1 with the
differences.
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWiI":
            names.add(parts[2].split("@")[0])
    return names


def main():
    table_path, excluded_path, preload, libdir = sys.argv[1:5]
    libs = sorted({os.path.realpath(p) for p in glob.glob(os.path.join(libdir, "libcudart.so*"))
                   if libdir})
    if not libs:
        print("no libcudart.so* under %r: skipped" % libdir)
        return 77
    table = {}
    for line in open(table_path):
        f = line.split()
        if f:
            table[f[0]] = f[1]
    excluded = []
    for line in open(excluded_path):
        if line.strip() and not line.startswith("#"):
            pattern, _, reason = line.strip().partition(" ")
            excluded.append((pattern, reason.strip()))
    runtime = set()
    for lib in libs:
        runtime |= {n for n in exported(lib) if re.match(r"(__)?cuda", n)}
    ours = exported(preload)
    errors = []
    used = set()
    for name in sorted(runtime):
        hits = [p for p, _ in excluded if fnmatch.fnmatchcase(name, p)]
        used.update(hits)
        if name in table and hits:
            errors.append("%s is interposed and excluded (%s)" % (name, hits[0]))
        elif name not in table and not hits:
            errors.append("%s is exported by libcudart but neither interposed nor excluded"
                          % name)
    for pattern, reason in excluded:
        if not reason:
            errors.append("exclusion %s has no reason" % pattern)
        if pattern not in used:
            errors.append("exclusion %s matches nothing libcudart exports" % pattern)
    for name in sorted(table):
        if name not in ours:
            errors.append("%s is in the table but libinferscope.so does not export it" % name)
    generated = sum(1 for o in table.values() if o == "generated")
    print("%s:" % ", ".join(libs))
    print("libcudart exports %d cuda functions: %d interposed (%d hand-written, %d "
          "generated from the headers), %d excluded by %d patterns"
          % (len(runtime), len(runtime & set(table)), len(table) - generated, generated,
             len(runtime - set(table)), len(excluded)))
    for e in errors:
        print("error: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
