# SPDX-License-Identifier: BSD-3-Clause
"""Upstreams for the tests of ewykd's upstream client (the reverse proxy,
ewyk_fetch()): nginx in the client's namespace, with its own temporary
prefix and configuration, started and ended by pid, on 198.18.0.1:8080
with the test files and a WebDAV location that stores PUT bodies; and a
small Python server beside it that plays the broken upstreams: one that
dies halfway through its answer (FIN or RST), one that never answers, one
that stalls after the head, and others. Nothing listens on the port of the
'refused' upstream."""
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time

from ewyk_harness import HOST_IP

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
NGINX_PORT, DIES_PORT, SLOW_PORT, REFUSED_PORT, ONCE_PORT, SINK_PORT, STALLS_PORT, \
    BIGHEAD_PORT = 8080, 8091, 8092, 8093, 8094, 8095, 8096, 8097
MB = 1 << 20

BROKEN_UPSTREAMS = f"""
import hashlib, socket, struct, threading, time

def serve(port, handle):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    s.bind(("{HOST_IP}", port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()

def read_head(c):
    data = b""
    while b"\\r\\n\\r\\n" not in data:
        d = c.recv(4096)
        if not d:
            return data
        data += d
    return data

def dies(c):
    head = read_head(c)
    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 200000\\r\\n\\r\\n" + b"x" * 100000)
    time.sleep(0.2)
    if b"/rst" in head:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()

def once(c):
    # One answer kept alive, then the next request finds the connection
    # closed under it (as a keep-alive timeout racing a request would).
    read_head(c)
    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 4\\r\\n\\r\\nonce")
    read_head(c)
    c.close()

def sink(c):
    # Takes nothing for 1.5 s (less than --upstream-timeout-ms), then the
    # body; answers its sha256.
    head = read_head(c)
    time.sleep(1.5)
    top, body = head.split(b"\\r\\n\\r\\n", 1)
    length = int(top.lower().split(b"content-length: ")[1].split(b"\\r\\n")[0])
    while len(body) < length:
        body += c.recv(65536)
    digest = hashlib.sha256(body).hexdigest().encode()
    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 64\\r\\n\\r\\n" + digest)
    c.close()

def slow(c):
    read_head(c)
    time.sleep(30)
    c.close()

def stalls(c):
    # A head and the first bytes of a long body, then silence.
    read_head(c)
    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 1000000\\r\\n\\r\\n" + b"s" * 1000)
    time.sleep(30)
    c.close()

def bighead(c):
    # A valid head of 20 fields of 1000 bytes, and a short body.
    read_head(c)
    fields = b"".join(b"X-Big-%d: %s\\r\\n" % (i, b"b" * 1000) for i in range(20))
    c.sendall(b"HTTP/1.1 200 OK\\r\\n" + fields + b"Content-Length: 2\\r\\n\\r\\nok")
    time.sleep(5)
    c.close()

threading.Thread(target=serve, args=({DIES_PORT}, dies), daemon=True).start()
threading.Thread(target=serve, args=({SLOW_PORT}, slow), daemon=True).start()
threading.Thread(target=serve, args=({ONCE_PORT}, once), daemon=True).start()
threading.Thread(target=serve, args=({SINK_PORT}, sink), daemon=True).start()
threading.Thread(target=serve, args=({STALLS_PORT}, stalls), daemon=True).start()
threading.Thread(target=serve, args=({BIGHEAD_PORT}, bighead), daemon=True).start()
print("ready", flush=True)
time.sleep(600)
"""


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def nginx_conf(prefix):
    return f"""
user root;
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 128; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    keepalive_requests 10000;
    keepalive_timeout 60s;
    types {{ text/plain txt; application/octet-stream bin; }}
    server {{
        listen {HOST_IP}:{NGINX_PORT};
        root {prefix}/www;
        location /dav/ {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            client_max_body_size 16m;
        }}
        # nginx's own gzip, the size ewykd's compress = on is held to
        location /gz/ {{
            gzip on;
            gzip_comp_level 6;
            gzip_types text/plain application/json;
            gzip_proxied any;
        }}
    }}
}}
"""


def upstream_args(*names):
    """--upstream options for the named upstreams of this module."""
    ports = {"ng": NGINX_PORT, "dies": DIES_PORT, "slow": SLOW_PORT,
             "refused": REFUSED_PORT, "once": ONCE_PORT, "sink": SINK_PORT,
             "stalls": STALLS_PORT, "bighead": BIGHEAD_PORT}
    args = []
    for n in names:
        args += ["--upstream", f"{n}={HOST_IP}:{ports[n]}"]
    return args


@contextlib.contextmanager
def upstreams_serving(a, sizes):
    """nginx with files of the given sizes ({name: bytes}, random bytes)
    and the broken upstreams, in the client namespace of the started
    appliance a; yields (prefix, {name: sha256}). Ends both on every exit."""
    prefix = tempfile.mkdtemp(prefix="ewyk-upstream-nginx-")
    files = {}
    nginx = broken = None
    try:
        os.makedirs(os.path.join(prefix, "www", "dav"))
        for name, size in sizes.items():
            data = os.urandom(size)
            with open(os.path.join(prefix, "www", name), "wb") as f:
                f.write(data)
            files[name] = sha256(data)
        with open(os.path.join(prefix, "nginx.conf"), "w") as f:
            f.write(nginx_conf(prefix))
        nginx = subprocess.Popen(["ip", "netns", "exec", a.client, NGINX, "-p", prefix,
                                  "-c", os.path.join(prefix, "nginx.conf")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        broken = a.ns_popen_python(BROKEN_UPSTREAMS)
        assert broken.stdout.readline().strip() == "ready"
        deadline = time.time() + 10
        probe = ["curl", "-s", "-o", "/dev/null", f"http://{HOST_IP}:{NGINX_PORT}/"]
        while a.ns(probe, check=False).returncode != 0:
            assert time.time() < deadline, "nginx did not come up"
            time.sleep(0.1)
        yield prefix, files
    finally:
        for p in (nginx, broken):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(prefix, ignore_errors=True)
