# SPDX-License-Identifier: MIT
"""A database the way a small service uses one (test-host-programs.c): SQLite in WAL mode
with synchronous=FULL, COMMITS small transactions (one row each, each made durable by
its own sync), then READS point lookups of random rows through a page cache of 8 pages,
so most lookups read their pages from the file. Prints what it did: the rows, the
commits, the lookups and the rows they found."""
import random
import sqlite3
import sys

COMMITS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
READS = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
ROWS = 20000

db = sqlite3.connect("small-io.db", isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=FULL")
db.execute("PRAGMA cache_size=8")
db.execute("PRAGMA mmap_size=0")
db.execute("CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT)")
# the table, in one transaction: pages enough that 8 of them cache little
db.execute("BEGIN")
db.executemany("INSERT INTO kv VALUES (?, ?)", ((k, "v%08d" % k * 8) for k in range(ROWS)))
db.execute("COMMIT")
rng = random.Random(22)
for i in range(COMMITS):
    db.execute("UPDATE kv SET v = ? WHERE k = ?", ("u%08d" % i * 8, rng.randrange(ROWS)))
found = 0
for i in range(READS):
    found += db.execute("SELECT v FROM kv WHERE k = ?", (rng.randrange(ROWS),)).fetchone() is not None
db.close()
print("rows", ROWS, "commits", COMMITS, "reads", READS, "found", found)
