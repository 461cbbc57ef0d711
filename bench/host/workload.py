# SPDX-License-Identifier: MIT
# A Python workload for the end-to-end overhead table: JSON encoding and decoding of
# nested records (allocation-heavy), text processing, and file I/O in many small
# writes and reads. Prints a checksum. Usage: workload.py DIR [ROUNDS]
import json
import os
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
path = os.path.join(d, "bench-workload.%d.jsonl" % os.getpid())
total = 0
for r in range(rounds):
    records = [
        {"id": i, "name": "item-%d-%d" % (r, i), "tags": ["t%d" % (i % 7), "x" * (i % 13)],
         "score": (i * 2654435761) % 1000 / 7.0}
        for i in range(20000)
    ]
    with open(path, "w", buffering=4096) as f:
        for rec in records:
            f.write(json.dumps(rec))
            f.write("\n")
    with open(path, "rb", buffering=0) as f:
        chunks = []
        while True:
            b = f.read(16384)
            if not b:
                break
            chunks.append(b)
    for line in b"".join(chunks).decode().splitlines():
        obj = json.loads(line)
        total += len(obj["name"]) + len(obj["tags"][1])
os.unlink(path)
print("checksum", total)
