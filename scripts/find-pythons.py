#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Prints, colon-separated, every CPython >= 3.8 on this machine by its real path: the
one running this script first, then Debian's (/usr/bin/python3.N) and pyenv's
(~/.pyenv/versions/3.N.*). Tests that are about Python run on each (meson.build);
a pyenv shim is a bash script and is never listed, only the programs it would run."""
import glob
import os
import re
import subprocess
import sys


def version(exe):
    try:
        out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[0], "
                              "sys.version_info[1], sys.executable)"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.stdout.split(" ", 2)
    if out.returncode != 0 or len(parts) != 3:
        return None
    return (int(parts[0]), int(parts[1])), parts[2].strip()


def main():
    cands = [sys.executable, "/usr/bin/python3"]
    cands += sorted(glob.glob("/usr/bin/python3.[0-9]*"))
    cands += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    found = []
    for c in cands:
        if not re.search(r"python3(\.\d+)?$", c) or not os.access(c, os.X_OK):
            continue
        v = version(c)
        if v is None or v[0] < (3, 8):
            continue
        real = os.path.realpath(v[1])
        if real not in found:
            found.append(real)
    print(":".join(found))


if __name__ == "__main__":
    main()
