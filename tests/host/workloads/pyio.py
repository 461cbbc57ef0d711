# SPDX-License-Identifier: MIT
# File and socket I/O on loopback from a Python interpreter, with deterministic
# output, run with and without the preload and compared.
import errno
import json
import os
import socket
import sys
import threading

d = sys.argv[1] if len(sys.argv) > 1 else "."
path = os.path.join(d, "pyio.bin")
with open(path, "wb") as f:
    f.write(bytes(range(256)) * 4096)
with open(path, "rb") as f:
    data = f.read()
print("file", len(data), sum(data) % 65521)
os.unlink(path)
try:
    open(os.path.join(d, "missing"))
except OSError as e:
    print("missing", errno.errorcode[e.errno])

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
port = srv.getsockname()[1]


def serve():
    conn, _ = srv.accept()
    with conn:
        while True:
            b = conn.recv(65536)
            if not b:
                break
            conn.sendall(b.upper())


t = threading.Thread(target=serve)
t.start()
cl = socket.create_connection(("127.0.0.1", port))
heads = []
for i in range(300):
    msg = ("line %d " % i).encode() * 50
    cl.sendall(msg)
    got = b""
    while len(got) < len(msg):
        got += cl.recv(65536)
    heads.append(got[:8].decode())
cl.close()
t.join()
srv.close()
print("socket", len(heads), heads[0], heads[-1])
s = socket.socket()
try:
    s.connect(("127.0.0.1", port))
    print("connected?")
except OSError as e:
    print("refused", errno.errorcode[e.errno])
finally:
    s.close()
print(json.dumps({"threads": threading.active_count()}))
