# SPDX-License-Identifier: MIT
"""sqlite3 with many small reads and a commit (an fsync) per write (test-host-programs.c).

A table of ROWS rows in DB (synchronous=FULL, journal in a rollback file), then
COMMITS transactions of one insert each, every one committed to disk, and READS point
queries. Prints what it did: commits, reads.
"""
import sqlite3
import sys

DB = sys.argv[1]
COMMITS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
READS = int(sys.argv[3]) if len(sys.argv) > 3 else 5000


def main():
    db = sqlite3.connect(DB, isolation_level=None)
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA cache_size=1")
    db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    db.execute("BEGIN")
    for k in range(2000):
        db.execute("INSERT INTO t VALUES (?, ?)", (k, "x" * 200))
    db.execute("COMMIT")
    commits = 0
    for k in range(COMMITS):
        db.execute("BEGIN")
        db.execute("INSERT INTO t VALUES (?, ?)", (100000 + k, "y" * 64))
        db.execute("COMMIT")
        commits += 1
    reads = 0
    for i in range(READS):
        row = db.execute("SELECT v FROM t WHERE k = ?", ((i * 7919) % 2000,)).fetchone()
        reads += row is not None
    db.close()
    print("commits %d reads %d" % (commits, reads))


if __name__ == "__main__":
    main()
