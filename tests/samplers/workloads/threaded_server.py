# SPDX-License-Identifier: MIT
# Python's threaded HTTP server (ThreadingHTTPServer, one thread per connection) on
# loopback under a bounded load: CLIENTS keep-alive connections of REQUESTS requests
# each, every request computing on the server side. The handler threads are made by
# the accept loop, itself a thread, and compute while holding the GIL in turns: the
# shape of a web front end. Prints the requests served and a checksum.
import http.client
import http.server
import sys
import threading

CLIENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
REQUESTS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
WORK = int(sys.argv[3]) if len(sys.argv) > 3 else 20000


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        n = int(self.path.lstrip("/") or "1")
        acc = 0
        for i in range(WORK):
            acc = (acc * 31 + i * n) % 1000003
        body = str(acc).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
port = server.server_address[1]
accept = threading.Thread(target=server.serve_forever, name="accept")
accept.start()

total = [0, 0]
lock = threading.Lock()


def client(k):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    s = 0
    for i in range(REQUESTS):
        conn.request("GET", "/%d" % (k * REQUESTS + i + 1))
        s = (s + int(conn.getresponse().read())) % 1000003
    conn.close()
    with lock:
        total[0] += REQUESTS
        total[1] = (total[1] + s) % 1000003


clients = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
for c in clients:
    c.start()
for c in clients:
    c.join()
server.shutdown()
accept.join()
server.server_close()
print("served", total[0], "checksum", total[1])
