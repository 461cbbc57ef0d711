#!/usr/bin/env python3
"""Where `meson install` puts the Python helper: prints two lines, the site directory
under PREFIX that this interpreter searches, and the path from DATADIR/inferscope/python
to it (the interpreter-neutral directory other interpreters get through PYTHONPATH).

    python-sitedir.py PREFIX DATADIR

The site directory is the first of site.getsitepackages() inside PREFIX/lib (Debian's
python3: /usr/local/lib/python3.X/dist-packages for /usr/local, /usr/lib/python3/
dist-packages for /usr). Meson's purelib is wrong for both interpreters found here:
Debian's gives /usr/local/lib/python3/dist-packages, which Debian's python3 does not
search, and pyenv's (the first python3 on PATH) gives site-packages, which no other
interpreter searches. With no site directory under PREFIX (another prefix), the
fallback PREFIX/lib/python3/dist-packages is found through PYTHONPATH only.
"""
import os
import site
import sys

prefix, datadir = os.path.normpath(sys.argv[1]), sys.argv[2]
lib = os.path.join(prefix, "lib") + os.sep
found = [d for d in site.getsitepackages() if os.path.normpath(d).startswith(lib)]
sitedir = os.path.normpath(found[0]) if found else os.path.join(lib, "python3", "dist-packages")
neutral = os.path.join(prefix, datadir, "inferscope", "python")
print(sitedir)
print(os.path.relpath(os.path.join(sitedir, "inferscope"), neutral))
