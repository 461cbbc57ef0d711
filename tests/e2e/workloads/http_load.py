# SPDX-License-Identifier: MIT
"""An http.server under a bounded loopback load (tests/e2e/test-host-programs.c).

The server listens on an ephemeral port of 127.0.0.1 and serves in the main thread;
a client process (not traced: LD_PRELOAD is taken out of its environment) sends
REQUESTS requests one at a time, PAUSE seconds apart, then the server shuts down.
Prints the requests the handler served and the connections it accepted.
"""
import http.server
import os
import subprocess
import sys
import threading

REQUESTS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
PAUSE = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01

served = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        global served
        served += 1
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


CLIENT = """
import sys, time, urllib.request
port, n, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
for i in range(n):
    with urllib.request.urlopen("http://127.0.0.1:%d/%d" % (port, i), timeout=10) as r:
        r.read()
    time.sleep(pause)
"""


def main():
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LD_PRELOAD", "INFERSCOPE"))}
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, str(port), str(REQUESTS), str(PAUSE)], env=env
    )

    def stop():
        client.wait(timeout=120)
        server.shutdown()

    threading.Thread(target=stop, daemon=True).start()
    server.serve_forever(poll_interval=0.05)
    server.server_close()
    print("served %d" % served)
    return 0 if client.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
