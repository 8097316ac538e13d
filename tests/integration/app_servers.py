# SPDX-License-Identifier: BSD-3-Clause
"""Small kernel HTTP/1.1 servers that stand for an application behind
ewykd (a pool's servers, an upstream behind a gateway), as Python source
that a test runs in a namespace (Appliance.ns_popen_python): it prints
"ready SHA256" once every port listens (ready() reads it). GET answers
"server PORT PATH"; a path ending in /headers the request's fields, one a
line; /host the Host it was given; /peer the address the connection came
from; /blob 300,000 random bytes, the same at every port, whose sha256 the
ready line gives; a path holding "slow" waits 1.5 s first."""


def app_servers(host, ports):
    """The source of servers on host (an IPv4 or IPv6 address; "::" takes
    both families) at each of ports."""
    family = "AF_INET6" if ":" in host else "AF_INET"
    return f"""
import hashlib, http.server, os, socket, socketserver, threading, time
BLOB = os.urandom(300000)

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = ("server %d %s\\n" % (self.server.server_address[1], self.path)).encode()
        if "slow" in self.path:
            time.sleep(1.5)
        if self.path.endswith("/headers"):
            body = "".join("%s: %s\\n" % kv for kv in self.headers.items()).encode()
        if self.path.endswith("/peer"):
            body = (self.client_address[0] + "\\n").encode()
        if self.path.endswith("/host"):
            body = self.headers["Host"].encode()
        if self.path.endswith("/blob"):
            body = BLOB
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass

class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    address_family = socket.{family}
    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

for port in {tuple(ports)!r}:
    s = Server(("{host}", port), Handler)
    threading.Thread(target=s.serve_forever, daemon=True).start()
print("ready", hashlib.sha256(BLOB).hexdigest(), flush=True)
threading.Event().wait()
"""


def ready(server):
    """Waits for the servers started from app_servers() to listen; returns
    the sha256 of their /blob."""
    word, digest = server.stdout.readline().split()
    assert word == "ready" and len(digest) == 64, (word, digest)
    return digest
