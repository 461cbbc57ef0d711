#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fails when a file includes a header of a folder its layer may not include.

Usage: check-layers.py [ROOT] [--table FILE] [--verbose]

ROOT is the repository (default: the parent of this script's folder); the table
(default ROOT/scripts/layers.txt) has one row per layer, "FOLDER...: FOLDERS IT MAY
INCLUDE" (the folders of one row may include each other). Every #include "..." of the .c and .h files under a listed folder is resolved
the way the compiler would find it here: from the repository root, next to the
including file, or, for a bare name, the one file of that name under a listed folder.
Exit status: 0 clean, 1 a forbidden include (each one printed as FILE:LINE), 2 a bad
table (an unknown folder, a folder listed twice, or a cycle).
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


class TableError(Exception):
    pass


def read_table(path, root):
    """{folder: [folders it may include]}. A row may name several folders: one layer,
    whose folders may include each other."""
    rows = {}
    layers = []
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            if ':' not in line:
                raise TableError('%s:%d: expected "FOLDER...: FOLDERS"' % (path, n))
            left, allowed = line.split(':', 1)
            folders = [x.strip('/') for x in left.split()]
            allowed = [a.strip('/') for a in allowed.split()]
            for folder in folders:
                if folder in rows:
                    raise TableError('%s:%d: %s is listed twice' % (path, n, folder))
                if not os.path.isdir(os.path.join(root, folder)):
                    raise TableError('%s:%d: no folder %s' % (path, n, folder))
                rows[folder] = allowed + [x for x in folders if x != folder]
            layers.append((folders, allowed))
    for folders, allowed in layers:
        for a in allowed:
            if a not in rows:
                raise TableError('%s: %s may include %s, which is not a row'
                                 % (path, ' '.join(folders), a))
    check_acyclic(layers, path)
    return rows


def check_acyclic(layers, path):
    layer_of = {f: i for i, (folders, _) in enumerate(layers) for f in folders}
    edges = [sorted({layer_of[a] for a in allowed} - {i})
             for i, (_, allowed) in enumerate(layers)]
    state = {}

    def visit(i, trail):
        if state.get(i) == 'done':
            return
        if state.get(i) == 'open':
            cycle = trail[trail.index(i):] + [i]
            raise TableError('%s: a cycle: %s' % (
                path, ' -> '.join(' '.join(layers[k][0]) for k in cycle)))
        state[i] = 'open'
        for j in edges[i]:
            visit(j, trail + [i])
        state[i] = 'done'

    for i in range(len(layers)):
        visit(i, [])


def folder_of(path, rows):
    """The longest listed folder that holds path (relative, '/'-separated), or None."""
    d = os.path.dirname(path)
    while True:
        if d in rows:
            return d
        if not d:
            return None
        d = os.path.dirname(d)


def sources(root, rows):
    seen = set()
    for folder in sorted(rows):
        for dirpath, dirnames, files in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for name in sorted(files):
                if name.endswith(('.c', '.h')):
                    rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, '/')
                    if rel not in seen:
                        seen.add(rel)
                        yield rel


def resolve(inc, src, root, by_name):
    """The included file relative to root, or None when it is outside the tree."""
    here = os.path.dirname(src)
    for cand in (os.path.normpath(os.path.join(here, inc)), os.path.normpath(inc)):
        cand = cand.replace(os.sep, '/')
        if not cand.startswith('../') and os.path.isfile(os.path.join(root, cand)):
            return cand
    if '/' not in inc and len(by_name.get(inc, ())) == 1:
        return by_name[inc][0]
    return None


def check(root, rows, verbose=False):
    files = list(sources(root, rows))
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    bad = []
    checked = 0
    for src in files:
        mine = folder_of(src, rows)
        with open(os.path.join(root, src), encoding='utf-8', errors='replace') as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(m.group(1), src, root, by_name)
                theirs = folder_of(target, rows) if target else None
                if theirs is None:
                    if verbose:
                        print('%s:%d: "%s" is outside the table' % (src, n, m.group(1)))
                    continue
                checked += 1
                if theirs != mine and theirs not in rows[mine]:
                    bad.append('%s:%d: includes %s, but %s may not include %s (it may '
                               'include: %s)' % (src, n, target, mine, theirs,
                                                 ' '.join(rows[mine]) or 'nothing else'))
    return files, checked, bad


def main(argv):
    ap = argparse.ArgumentParser(description='Checks includes against the table of layers.')
    ap.add_argument('root', nargs='?',
                    default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--table', help='default: ROOT/scripts/layers.txt')
    ap.add_argument('--verbose', action='store_true', help='also list unchecked includes')
    o = ap.parse_args(argv)
    table = o.table or os.path.join(o.root, 'scripts', 'layers.txt')
    try:
        rows = read_table(table, o.root)
    except (TableError, OSError) as e:
        print('check-layers: %s' % e, file=sys.stderr)
        return 2
    files, checked, bad = check(o.root, rows, o.verbose)
    for b in bad:
        print(b, file=sys.stderr)
    print('check-layers: %d files in %d folders, %d includes checked, %d forbidden'
          % (len(files), len(rows), checked, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
