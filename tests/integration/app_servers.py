# SPDX-License-Identifier: BSD-3-Clause
"""Small kernel HTTP/1.1 servers that stand for an application behind
ewykd (a pool's servers, an upstream behind a gateway), as Python source
that a test runs in a namespace (Appliance.ns_popen_python): it prints
"ready" once every port listens. GET answers "server PORT PATH"; a path
ending in /headers the request's fields, one a line; /peer the address
the connection came from; a path holding "slow" waits 1.5 s first."""


def app_servers(host, ports):
    """The source of servers on host (an IPv4 address, or "::" for both
    families) at each of ports."""
    family = "AF_INET6" if ":" in host else "AF_INET"
    return f"""
import http.server, socket, socketserver, threading, time

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
print("ready", flush=True)
threading.Event().wait()
"""
