# SPDX-License-Identifier: MIT
# Python's http.server answering REQUESTS requests from a client process that is not
# traced (LD_PRELOAD and INFERSCOPE_* removed from its environment), one connection a
# request, PAUSE_MS apart: a front end that waits for its input. Prints the requests it
# served and the connections it accepted, counted by the server itself.
import http.server
import os
import subprocess
import sys

REQUESTS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
PAUSE_MS = int(sys.argv[2]) if len(sys.argv) > 2 else 20

CLIENT = """
import sys, time, urllib.request
port, n, pause = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) / 1000
for i in range(n):
    time.sleep(pause)
    urllib.request.urlopen("http://127.0.0.1:%d/%d" % (port, i)).read()
"""

counts = {"served": 0, "accepted": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        counts["served"] += 1
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(http.server.HTTPServer):
    def get_request(self):
        r = super().get_request()
        counts["accepted"] += 1
        return r


server = Server(("127.0.0.1", 0), Handler)
env = {k: v for k, v in os.environ.items()
       if k != "LD_PRELOAD" and not k.startswith("INFERSCOPE_")}
client = subprocess.Popen([sys.executable, "-c", CLIENT, str(server.server_address[1]),
                           str(REQUESTS), str(PAUSE_MS)], env=env)
while counts["served"] < REQUESTS:
    server.handle_request()
server.server_close()
client.wait()
print("served", counts["served"], "accepted", counts["accepted"])
