#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layer check on crafted trees: it must pass a clean one and fail each violation."""
import os
import shutil
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts',
                      'check-layers.py')
failures = []
roots = []


def tree(files, table):
    root = tempfile.mkdtemp(prefix='isc-layers-')
    roots.append(root)
    files = dict(files, **{'scripts/layers.txt': table})
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)
    return root


def run(root):
    p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def expect(what, root, rc, *needles):
    got, out = run(root)
    ok = got == rc and all(n in out for n in needles)
    print('%s: %s (exit %d)' % ('ok' if ok else 'FAILED', what, got))
    if not ok:
        failures.append(what)
        print('  expected exit %d and %r in:\n%s' % (rc, needles, out))


TABLE = 'low:\nlow/deep: low\nhigh: low low/deep\ntop: low high\n'
CLEAN = {
    'low/a.h': '#include <stdio.h>\n',
    'low/a.c': '#include "low/a.h"\n#include "a.h"\n',
    'low/deep/d.h': '#include "low/a.h"\n',
    'high/b.h': '#include "low/a.h"\n#include "low/deep/d.h"\n',
    'high/b.c': '#include "high/b.h"\n#include "outside.h"\n#include "isc-config.h"\n',
    'top/main.c': '#include "high/b.h"\n/* #include "top/x.h" is text, not an include */\n',
    'other/x.h': '#include "top/main.c"\n',  # not a row: not checked
}

expect('a clean tree passes', tree(CLEAN, TABLE), 0, '0 forbidden')
expect('a lower folder including a higher one fails, naming file and line',
       tree(dict(CLEAN, **{'low/a.c': '#include "low/a.h"\n\n#include "high/b.h"\n'}), TABLE),
       1, 'low/a.c:3: includes high/b.h', 'low may not include high')
expect('a subfolder is a row of its own',
       tree(dict(CLEAN, **{'low/deep/d.c': '#include "high/b.h"\n'}), TABLE), 1,
       'low/deep/d.c:1', 'low/deep may not include high')
expect('a folder not listed as allowed fails even when it is lower',
       tree(dict(CLEAN, **{'top/main.c': '#include "low/deep/d.h"\n'}), TABLE), 1,
       'top may not include low/deep')
expect('a bare name is found where it lives',
       tree(dict(CLEAN, **{'low/c.c': '#include "b.h"\n'}), TABLE), 1,
       'low/c.c:1: includes high/b.h')
expect('a path relative to the including file is resolved',
       tree(dict(CLEAN, **{'low/e.c': '#include "../high/b.h"\n'}), TABLE), 1,
       'low/e.c:1: includes high/b.h')
expect('a cycle in the table is refused', tree(CLEAN, 'low: high\nhigh: low\ntop:\n'), 2,
       'a cycle')
expect('a folder that is not a row is refused', tree(CLEAN, 'low: lwo\nhigh:\ntop:\n'), 2,
       'lwo, which is not a row')
expect('a row for a missing folder is refused', tree(CLEAN, TABLE + 'gone: low\n'), 2,
       'no folder gone')
SIBLINGS = 'low:\nlow/deep: low\nhigh top: low low/deep\n'
expect('the folders of one row may include each other', tree(CLEAN, SIBLINGS), 0,
       '0 forbidden')
expect('but not a row above them',
       tree(dict(CLEAN, **{'low/deep/d.c': '#include "top/main.c"\n'}), SIBLINGS), 1,
       'low/deep may not include top')
expect('a cycle through a row of several folders is refused',
       tree(CLEAN, 'low: top\nlow/deep:\nhigh top: low\n'), 2, 'a cycle: ')
for r in roots:
    shutil.rmtree(r, ignore_errors=True)
sys.exit(1 if failures else 0)
