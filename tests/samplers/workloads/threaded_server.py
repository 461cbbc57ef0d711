# SPDX-License-Identifier: MIT
# Python's threaded HTTP server (ThreadingHTTPServer, one thread per connection) on
# loopback under a bounded load: CLIENTS keep-alive connections of REQUESTS requests
# each, every request computing WORK_US microseconds of the handler thread's CPU time (a
# CPU-time budget, not an iteration count: the test needs each handler to compute a known
# amount on any interpreter and machine). The handler threads are made by
# the accept loop, itself a thread, and compute while holding the GIL in turns: the
# shape of a web front end. Prints the requests served.
import http.client
import http.server
import sys
import threading
import time

CLIENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
REQUESTS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
WORK_US = int(sys.argv[3]) if len(sys.argv) > 3 else 1500


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        n = int(self.path.lstrip("/") or "1")
        acc = 0
        until = time.thread_time_ns() + WORK_US * 1000
        while time.thread_time_ns() < until:
            for i in range(500):
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

served = [0]
lock = threading.Lock()


def client(k):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(REQUESTS):
        conn.request("GET", "/%d" % (k * REQUESTS + i + 1))
        conn.getresponse().read()
    conn.close()
    with lock:
        served[0] += REQUESTS


clients = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
for c in clients:
    c.start()
for c in clients:
    c.join()
server.shutdown()
accept.join()
server.server_close()
print("served", served[0])
