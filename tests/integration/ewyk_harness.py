# SPDX-License-Identifier: BSD-3-Clause
"""Runs ewykd inside a private network namespace, on one of three media:

- tap: net_tap; the kernel side of the tap is the client (in the same
  namespace, or bridged to a client namespace of its own).
- af_xdp: net_af_xdp on one end of a veth pair (copy mode), the other end
  in a client namespace; the client's TX checksum offload is off, or its
  TCP segments would leave with partial checksums.
- memif: net_memif (ewykd the server) and dpdk-testpmd as a wire: the memif
  client on one side, net_tap on the other in the client namespace, io
  forwarding between them.

The namespaces, devices, memif socket, DPDK runtime directories and
processes are created per appliance and removed on every exit path
(close(), the pytest fixtures' finalizers, or atexit when the interpreter
goes down). Addresses are the contract's: ewykd 198.18.0.2/24, the kernel
side 198.18.0.1/24 (RFC 2544 benchmarking range); with ip6=True also
ewykd 2001:2::2/64 and the kernel side 2001:2::1/64 (RFC 5180's range),
the kernel's without duplicate address detection (nodad), so that nothing
waits for it. Nothing else is ever used.

Two ports (second_port=): ewykd's second port is a net_memif server, its
first the medium's; the contract's /24 is split in two /25s, ewykd
198.18.0.2/25 and 198.18.0.130/25. "wire": dpdk-testpmd forwards between
that memif and a tap in a second client namespace, whose kernel side is
198.18.0.129/25; "peer": nothing is attached, the test brings its own memif
client (memif_peer_vdev()), as a flood does.
"""
import atexit
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EWYKD = os.environ.get("EWYKD", os.path.join(ROOT, "build", "app", "ewykd"))
PYTHON = "/usr/bin/python3"
APP_IP = "198.18.0.2"
HOST_IP = "198.18.0.1"
APP_IP6 = "2001:2::2"
HOST_IP6 = "2001:2::1"
IFACE = "ewyk0"
MEDIA = ("tap", "af_xdp", "memif")
WITH_BPFFS = os.path.join(ROOT, "deploy", "with-bpffs.sh")
TESTPMD = "dpdk-testpmd"
PROFILES = os.path.join(ROOT, "drivers-config")
PROFILE_SOCKET = "/run/ewyk/memif.sock"
APP_IP2 = "198.18.0.130"
HOST_IP2 = "198.18.0.129"
SECOND_PORT = (None, "wire", "peer")

_seq = itertools.count()
_live = set()


def nonzero(v):
    """v without its zero counters (dicts of them, recursively)."""
    if isinstance(v, dict):
        return {k: nonzero(x) for k, x in v.items() if x not in (0, {}) and nonzero(x) != {}}
    return v


def live_appliances():
    """The appliances this process started and has not closed."""
    return list(_live)


# Root reads and writes any file whatever its mode (CAP_DAC_OVERRIDE): a
# command to run ewykd under without the two capabilities that bypass file
# permissions, so that a mode 000 file or a mode 555 directory is what it
# is for any other user.
NO_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
          "--bounding-set=-dac_override,-dac_read_search"]


def eal_memory_args(mb=256, hugepages=True):
    """Hugepages when enough are free (and hugepages), else ordinary
    memory (--no-huge)."""
    free = size_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("HugePages_Free:"):
                free = int(line.split()[1])
            elif line.startswith("Hugepagesize:"):
                size_kb = int(line.split()[1])
    if hugepages and free * size_kb // 1024 >= mb:
        return ["--in-memory", "-m", str(mb)]
    return ["--no-huge", "--no-shconf", "-m", str(mb)]


def shared_memory_args(mb=256):
    """A shared configuration under the file prefix, so that secondary
    processes (dpdk-dumpcap) can attach: hugepages, no --in-memory."""
    if eal_memory_args(mb)[0] != "--in-memory":
        raise RuntimeError(f"a shared configuration needs {mb} MB of free hugepages "
                           "(deploy/setup.sh reserves them)")
    return ["-m", str(mb)]


def hugepage_files(prefix):
    """The hugepage files a shared configuration leaves under prefix."""
    found = []
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "hugetlbfs" and os.path.isdir(mnt):
                found += [os.path.join(mnt, n) for n in os.listdir(mnt)
                          if n.startswith(prefix + "map_")]
    return found


def run(cmd, check=True, **kw):
    return subprocess.run(cmd, check=check, text=True, capture_output=True, **kw)


def check_config(ns, *args):
    """ewykd ARGS --check-config in namespace ns (no device, no memory):
    (exit status, stdout, stderr)."""
    r = run(["ip", "netns", "exec", ns, EWYKD, "--no-huge", "--no-pci", "--",
             *args, "--check-config"], check=False, timeout=30)
    return r.returncode, r.stdout, r.stderr


def fnv1a64(data):
    """FNV-1a, 64 bits: the digest ewykd's /upload and the example
    plugin's fetch answer with."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except (OSError, TypeError):
        return ""


def stop_process(proc, sig=signal.SIGINT, timeout=10):
    """Stops a process the harness started, by its pid: sig, then SIGKILL
    after timeout. Returns its exit status (None if there was none)."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


class Appliance:
    """One ewykd process in its own namespace."""

    def __init__(self, www=None, args=(), lcores="0-1", vdev_args="", mem_mb=256,
                 client_ns=False, env=None, shared_config=False, medium="tap",
                 wire_lcores="0@0,1@0", profile=False, second_port=None,
                 demo=True, wrap=(), ip6=False, binary=None, hugepages=True):
        """client_ns: the client gets a namespace of its own, joined to the
        tap through a bridge in the appliance's namespace, so that packets
        between them are forwarded and can really be lost (a drop on the
        kernel's own output path is retried at once by its TCP). The
        af_xdp and memif media always have one (see the module's text).
        wire_lcores: dpdk-testpmd's lcores on memif (main and forwarding;
        the default leaves CPU 1 to ewykd's shard).
        profile: ewykd is started with `-- --config` on the medium's
        drivers-config profile (see profile_config()) instead of EAL
        options on its command line.
        second_port: None, "wire" or "peer" (see the module's text).
        demo: the demonstration routes and the state API are on
        (--demo-routes --state-api), as most tests drive them; off, ewykd
        runs with its safe defaults.
        wrap: a command ewykd runs under (setpriv, to drop capabilities).
        ip6: the port gets --ip6 2001:2::2/64 too, and the client side
        2001:2::1/64; the appliance is ready once it answers ping -6.
        ip6="only": the port has no IPv4 (--ip6 alone).
        binary: another ewykd than the build tree's (an installed one).
        hugepages: False runs ewykd on ordinary memory (--no-huge) even
        where hugepages are free."""
        if medium not in MEDIA:
            raise ValueError(f"medium {medium!r}: one of {MEDIA}")
        if ip6 and second_port:
            raise ValueError("ip6 on one port only: not with second_port")
        if second_port not in SECOND_PORT or (second_port and
                                              (medium == "memif" or profile)):
            raise ValueError(f"second_port {second_port!r}: one of {SECOND_PORT}, "
                             "beside a tap or af_xdp first port on the command line")
        n = next(_seq)
        self.name = f"ewyk-t{os.getpid()}-{n}"
        self.medium = medium
        client_ns = client_ns or medium != "tap"
        self.client = f"{self.name}c" if client_ns else self.name
        # The client's interface: the tap itself, the bridged veth's end,
        # the af_xdp veth's peer, or the wire's tap.
        self.client_iface = "vc" if client_ns and medium == "tap" else IFACE
        self.run_dir = f"/run/{self.name}"
        self.memif_sock = os.path.join(self.run_dir, "memif.sock")
        self.wire_lcores = wire_lcores
        self.wire = None
        self.wire_log_path = None
        self.second_port = second_port
        self.client2 = f"{self.name}m" if second_port else None
        self.memif2_sock = os.path.join(self.run_dir, "memif1.sock")
        self.wire2 = None
        self.wire2_log_path = None
        self.profile = os.path.join(PROFILES, f"{medium}.conf") if profile else None
        self.config_path = None
        self.prefix = self.name
        self.www = www
        self.args = list(args)
        if demo:
            self.args = ["--demo-routes", "--state-api"] + self.args
        self.lcores = lcores
        self.vdev_args = vdev_args
        self.mem_mb = mem_mb
        self.hugepages = hugepages
        self.env = env		# added to ewykd's environment
        self.ip6 = ip6
        self.wrap = list(wrap)
        self.binary = binary or EWYKD
        self.shared_config = shared_config	# dpdk-dumpcap can attach
        self.proc = None
        self.log_path = None
        self.returncode = None

    # -- lifecycle -----------------------------------------------------
    def start(self, timeout=20):
        run(["ip", "netns", "add", self.name])
        _live.add(self)
        if self.client != self.name:
            run(["ip", "netns", "add", self.client])
        if self.client2:
            run(["ip", "netns", "add", self.client2])
        fd, self.log_path = tempfile.mkstemp(prefix=self.name + "-", suffix=".log")
        os.close(fd)
        launcher = []
        if self.medium == "af_xdp":
            self._veth()
            launcher = [WITH_BPFFS]
        if self.medium == "memif" or self.second_port:
            os.makedirs(self.run_dir, exist_ok=True)
        lc = "--lcores" if "@" in self.lcores else "-l"
        cmd = ["ip", "netns", "exec", self.name, *launcher, *self.wrap, self.binary]
        if self.profile:
            cmd += ["--", "--config", self.profile_config()]
        else:
            cmd += [lc, self.lcores, "--no-pci", "--vdev", self.vdev(), *self.second_vdev(),
                    *self.eal_run_args(), "--"]
        if self.second_port:
            cmd += ["--ip", f"{APP_IP}/25", "--ip", f"{APP_IP2}/25"]
        if self.ip6:
            cmd += ([] if self.ip6 == "only" else ["--ip", f"{APP_IP}/24"]) + \
                ["--ip6", f"{APP_IP6}/64"]
        if self.www:
            cmd += ["--www", self.www]
        cmd += self.args
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True,
                                     env={**os.environ, **self.env} if self.env else None)
        self._wait_log(self.read_log, "serving", self.proc, "ewykd", timeout)
        if self.medium == "memif":
            self.wire, self.wire_log_path = self._start_wire(
                self.client, self.memif_sock, "w", self.wire_lcores, timeout)
            self._client_side(IFACE)
        if self.second_port == "wire":
            self.wire2, self.wire2_log_path = self._start_wire(
                self.client2, self.memif2_sock, "m", self.wire_lcores, timeout)
            for args in (["addr", "add", f"{HOST_IP2}/25", "dev", IFACE],
                         ["link", "set", IFACE, "up"], ["link", "set", "lo", "up"]):
                run(["ip", "-n", self.client2, *args])
        if self.medium == "tap":
            self._tap_client()
        self.ip("link", "set", "lo", "up")
        # ARP (and ND) and the first answer: the appliance is ready when it
        # pings.
        deadline = time.time() + timeout
        while time.time() < deadline:
            if (self.ip6 == "only" or self.ns(["ping", "-c", "1", "-W", "1", APP_IP],
                                                   check=False).returncode == 0) \
                    and (self.second_port != "wire" or self.ns2(
                        ["ping", "-c", "1", "-W", "1", APP_IP2], check=False).returncode == 0) \
                    and (not self.ip6 or self.ns(["ping", "-6", "-c", "1", "-W", "1", APP_IP6],
                                                 check=False).returncode == 0):
                return self
        raise RuntimeError(f"ewykd does not answer ping:\n{self.read_log()}"
                           f"{self.read_wire_log()}")

    def _tap_client(self):
        """tap: the client on the tap's kernel side, or bridged to it."""
        if self.client == self.name:
            self.ip("addr", "add", f"{HOST_IP}/24", "dev", IFACE)
            if self.ip6:
                # net_tap gives the kernel's side the port's own MAC, and
                # so its link-local address: both sides' duplicate address
                # detection finds the other. Give the kernel's side
                # another MAC; the link goes down and up below, so that
                # both probe their link-local addresses again.
                self.ip("link", "set", IFACE, "address", "02:00:00:00:00:fe")
                self.ip("-6", "addr", "flush", "dev", IFACE, "scope", "link")
                self.ip("link", "set", IFACE, "down")
                time.sleep(0.3)		# ewykd looks at its link every 100 ms
                self.ip("addr", "add", f"{HOST_IP6}/64", "dev", IFACE, "nodad")
        else:
            # net_tap gives the kernel's side the port's own MAC; a bridge
            # would take frames to it as its own. Give it another one.
            self.ip("link", "set", IFACE, "address", "02:00:00:00:00:fe")
            self.ip("link", "add", "br0", "type", "bridge")
            self.ip("link", "set", IFACE, "master", "br0")
            self.ip("link", "add", "vb", "type", "veth", "peer", "name", "vc",
                    "netns", self.client)
            self.ip("link", "set", "vb", "master", "br0")
            for dev in ("br0", "vb"):
                self.ip("link", "set", dev, "up")
            self._client_side("vc")
            # The client's segments must reach the tap MTU-sized.
            run(["ip", "netns", "exec", self.client, "ethtool", "-K", "vc",
                 "tso", "off", "gso", "off", "gro", "off"], check=False)
        self.ip("link", "set", IFACE, "up")

    def eal_run_args(self):
        """What makes a run of its own: file prefix, log level, memory."""
        return ["--file-prefix", self.prefix, "--log-level", "*:warning",
                *(shared_memory_args(self.mem_mb) if self.shared_config
                  else eal_memory_args(self.mem_mb, self.hugepages))]

    def profile_config(self):
        """A copy of the medium's profile as shipped, but for what makes a
        run of its own: its file prefix, memory this host can give, and the
        memif socket under the run's directory. Returns the copy's path."""
        fd, self.config_path = tempfile.mkstemp(prefix=self.name + "-", suffix=".conf")
        out = []
        with open(self.profile) as f:
            for line in f:
                if line.startswith("args ="):
                    toks = line.split("=", 1)[1].split()
                    if "-m" in toks:
                        del toks[toks.index("-m"):toks.index("-m") + 2]
                    toks = [t.replace(PROFILE_SOCKET, self.memif_sock) for t in toks
                            if t not in ("--in-memory", "--no-huge", "--no-shconf")]
                    line = "args = " + " ".join(toks + self.eal_run_args()) + "\n"
                out.append(line)
        with os.fdopen(fd, "w") as f:
            f.writelines(out)
        return self.config_path

    def vdev(self):
        """ewykd's --vdev for its medium."""
        if self.medium == "af_xdp":
            return f"net_af_xdp0,iface={IFACE},start_queue=0,queue_count=1{self.vdev_args}"
        if self.medium == "memif":
            return (f"net_memif0,role=server,socket={self.memif_sock},"
                    f"socket-abstract=no{self.vdev_args}")
        return f"net_tap0,iface={IFACE}{self.vdev_args}"

    def second_vdev(self):
        """The second port's --vdev (net_memif server), if there is one."""
        if not self.second_port:
            return []
        return ["--vdev", f"net_memif1,role=server,socket={self.memif2_sock},"
                "socket-abstract=no"]

    def memif_peer_vdev(self):
        """peer: the --vdev of a memif client on ewykd's second port."""
        return f"net_memif0,role=client,socket={self.memif2_sock},socket-abstract=no"

    def _client_side(self, dev):
        """198.18.0.1/24 (and 2001:2::1/64) on the client's dev, up, with
        its loopback."""
        v6 = [["addr", "add", f"{HOST_IP6}/64", "dev", dev, "nodad"]] if self.ip6 else []
        for args in (["addr", "add", f"{HOST_IP}/24", "dev", dev], *v6,
                     ["link", "set", dev, "up"], ["link", "set", "lo", "up"]):
            run(["ip", "-n", self.client, *args])

    def _veth(self):
        """af_xdp: IFACE in the appliance's namespace, its peer (also
        IFACE) the client's. One queue pair: the 22.11 PMD takes no more
        queues than the device's combined channels, and veth has none.
        Both ends take ewykd's --mtu, if it is given one."""
        mtu = self.args[self.args.index("--mtu") + 1] if "--mtu" in self.args else "1500"
        self.ip("link", "add", IFACE, "mtu", mtu, "type", "veth", "peer", "name", IFACE,
                "mtu", mtu, "netns", self.client)
        self.ip("link", "set", IFACE, "up")
        self._client_side(IFACE)
        run(["ip", "netns", "exec", self.client, "ethtool", "-K", IFACE, "tx", "off"])

    def _start_wire(self, netns, sock, suffix, lcores, timeout):
        """dpdk-testpmd in netns, a memif client facing ewykd on sock and a
        net_tap (IFACE) whose kernel side is the client. Returns the
        process and its log's path."""
        fd, log_path = tempfile.mkstemp(prefix=f"{self.name}-wire{suffix}-", suffix=".log")
        os.close(fd)
        cmd = ["ip", "netns", "exec", netns, TESTPMD, "--lcores", lcores,
               "--no-pci", "--file-prefix", self.prefix + suffix, "--log-level", "*:warning",
               *eal_memory_args(128), "--vdev", f"net_tap0,iface={IFACE}",
               "--vdev", f"net_memif0,role=client,socket={sock},socket-abstract=no",
               "--", "--forward-mode=io", "--auto-start", "--no-lsc-interrupt",
               "--total-num-mbufs", "8192",
               # without a stats period a non-interactive testpmd exits at once
               "--stats-period", "3600"]
        with open(log_path, "w") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        self._wait_log(lambda: read_text(log_path), "io packet forwarding", proc,
                       "dpdk-testpmd", timeout)
        return proc, log_path

    def _wait_log(self, read, text, proc, what, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with {proc.returncode}:\n{read()}")
            if text in read():
                return
            time.sleep(0.05)
        raise RuntimeError(f"{what} did not start:\n{read()}")

    def stop_wire(self, timeout=10):
        """Stops dpdk-testpmd (memif) by its pid; returns its exit status."""
        return stop_process(self.wire, signal.SIGINT, timeout)

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Signals ewykd and returns (exit status, seconds it took)."""
        if self.proc is None or self.proc.poll() is not None:
            return (self.proc.returncode if self.proc else None), 0.0
        t0 = time.monotonic()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.returncode = self.proc.returncode
        return self.returncode, time.monotonic() - t0

    def stop_under_load(self, path, after=1.0):
        """SIGTERM while 16 h2load connections drive path; returns (exit
        status, seconds to stop)."""
        load = subprocess.Popen(["ip", "netns", "exec", self.client, "h2load", "--h1",
                                 "-D", "4", "-c", "16", self.url(path)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(after)
            return self.stop()
        finally:
            # The load is the test's own process and has served its
            # purpose: it must not outlive the test, nor hold it up
            # (h2load's duration mode sits out its -D on connections it
            # tries while the appliance is gone).
            stop_process(load, signal.SIGINT, timeout=5)

    def close(self):
        # The wire first: a 22.11 memif client whose server goes away while
        # it forwards may crash (see test_media.py); ewykd takes its
        # client's leaving in its stride.
        self.stop_wire(timeout=5)
        stop_process(self.wire2, signal.SIGINT, 5)
        if self.proc is not None and self.proc.poll() is None:
            self.stop(timeout=5)
        if self.proc is not None:
            self.log.close()
        run(["ip", "netns", "del", self.name], check=False)
        for netns in {self.client, self.client2} - {self.name, None}:
            run(["ip", "netns", "del", netns], check=False)
        for d in (f"/var/run/dpdk/{self.prefix}", f"/var/run/dpdk/{self.prefix}w",
                  f"/var/run/dpdk/{self.prefix}m", self.run_dir):
            shutil.rmtree(d, ignore_errors=True)
        for attr in ("log_path", "wire_log_path", "wire2_log_path", "config_path"):
            path = getattr(self, attr)
            if path and os.path.exists(path):
                os.unlink(path)
            setattr(self, attr, None)
        for path in hugepage_files(self.prefix):
            os.unlink(path)
        _live.discard(self)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # -- helpers ------------------------------------------------------
    def read_log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except (OSError, TypeError):
            return ""

    def post_mortem(self):
        """What to read when a test failed beside this appliance: whether it
        runs, its log's end, its ports' and data path's counters (or why
        telemetry gave none) and its kernel peer's counters."""
        state = "running" if self.proc and self.proc.poll() is None else \
            f"exited {self.proc.returncode if self.proc else None}"
        parts = [f"ewykd {state}; log's end:\n{self.read_log()[-4000:]}"]
        try:
            parts.append(json.dumps(nonzero(self.telemetry("/ewyk/ports", "/ewyk/stats",
                                                           "/ewyk/tcp")), sort_keys=True))
        except (AssertionError, subprocess.SubprocessError, OSError, ValueError) as e:
            parts.append(f"no telemetry: {e}")
        for netns in dict.fromkeys((self.name, self.client)):
            r = run(["ip", "-n", netns, "-s", "link"], check=False)
            parts.append(f"{netns}: {r.stdout}{r.stderr}")
        if state == "running":
            parts.append(self._stuck_threads())
        return "\n".join(parts) + self.read_wire_log()

    def _stuck_threads(self):
        """Whether the shards still turn their poll loops (their polls
        counted twice, half a second apart); if one does not, every
        thread's stack, read with gdb: where a shard is stuck."""
        try:
            before = self.telemetry("/ewyk/shards")
            time.sleep(0.5)
            after = self.telemetry("/ewyk/shards")
        except (AssertionError, subprocess.SubprocessError, OSError, ValueError) as e:
            return f"no /ewyk/shards: {e}"
        polls = lambda t: {k: v.get("polls_count") for k, v in t.items()
                           if isinstance(v, dict)}
        if polls(before) != polls(after):
            return f"shards polling: {polls(before)} -> {polls(after)}"
        r = run(["gdb", "-p", str(self.proc.pid), "-batch", "-nx",
                 "-ex", "thread apply all bt 16"], check=False, timeout=90)
        return (f"shards NOT polling: {polls(before)} -> {polls(after)}; their stacks:\n"
                + r.stdout[-12000:] + r.stderr[-2000:])

    def read_wire_log(self):
        return "".join(f"\ndpdk-testpmd ({what}):\n" + read_text(path)
                       for what, path in (("wire", self.wire_log_path),
                                          ("second port's wire", self.wire2_log_path))
                       if path)

    def ip(self, *args):
        return run(["ip", "-n", self.name, *args])

    def ns(self, cmd, check=True, timeout=120, **kw):
        """Runs a command on the client side."""
        return run(["ip", "netns", "exec", self.client, *cmd], check=check,
                   timeout=timeout, **kw)

    def ns2(self, cmd, check=True, timeout=120, **kw):
        """Runs a command on the second port's client side."""
        return run(["ip", "netns", "exec", self.client2, *cmd], check=check,
                   timeout=timeout, **kw)

    def ns_popen(self, cmd):
        """Starts a client command in the background; text stdout."""
        return subprocess.Popen(["ip", "netns", "exec", self.client, *cmd],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def ns_popen_python(self, code):
        return self.ns_popen([PYTHON, "-c", code])

    def in_appliance_ns(self, cmd, check=True, **kw):
        """Runs a command in the appliance's namespace (tap, bridge)."""
        return run(["ip", "netns", "exec", self.name, *cmd], check=check, **kw)

    def h2_upload(self, path, src, method="POST", out=None, headers=(), timeout=60,
                  url=None):
        """An HTTP/2 upload of file src to path with python3-h2
        (h2_upload.py: curl 7.88's HTTP/2 uploads sometimes send a DATA
        frame too many). Returns the CompletedProcess: stdout the status,
        the body in out when given, returncode 1 on a reset."""
        return self.ns([PYTHON, os.path.join(ROOT, "tests", "integration", "h2_upload.py"),
                        url or self.url(path), str(src), "--method", method,
                        *(["--out", str(out)] if out else []),
                        *sum((["--header", h] for h in headers), [])],
                       check=False, timeout=timeout)

    def ns_python(self, code, timeout=120):
        """Runs Python code inside the namespace; returns its stdout."""
        r = self.ns([PYTHON, "-c", code], check=False, timeout=timeout)
        if r.returncode != 0:
            raise AssertionError(f"namespace script failed:\n{r.stdout}\n{r.stderr}")
        return r.stdout

    def exchange(self, request, timeout=10, host=APP_IP):
        """Sends raw bytes on one connection from the client side; returns
        all that comes back until the server closes, as text (lines end in
        \\n)."""
        return self.ns_python(f"""
import socket, sys
c = socket.create_connection(("{host}", 80), timeout={timeout})
c.sendall({request!r})
while True:
    d = c.recv(65536)
    if not d:
        break
    sys.stdout.buffer.write(d)
""")

    def url(self, path="/"):
        return f"http://{APP_IP}{path}"

    def url6(self, path="/"):
        return f"http://[{APP_IP6}]{path}"

    def telemetry(self, *cmds):
        """Reads commands over ewykd's telemetry socket, one connection
        for them all, as the stock dpdk-telemetry.py does (the same
        runtime directory, handshake and replies; test_eal_start.py runs
        the stock client itself). A call costs a millisecond, not the
        stock client's start-up of 60 ms: tests poll it in loops."""
        path = os.path.join(os.environ.get("RUNTIME_DIRECTORY") or "/var/run", "dpdk",
                            self.prefix, "dpdk_telemetry.v2")
        out = {}
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(30)
            s.connect(path)
            size = json.loads(s.recv(1024))["max_output_len"]
            for c in cmds:
                s.send(c.encode())
                out.update(json.loads(s.recv(size)))
        # A reply is keyed by the command without its parameters.
        keys = [c.split(",", 1)[0] for c in cmds]
        missing = [k for k in keys if k not in out]
        if missing:
            raise AssertionError(f"no telemetry answer for {missing}: {out}")
        return out if len(cmds) > 1 else out[keys[0]]

    def stats(self):
        return self.telemetry("/ewyk/stats")

    def _idle_sample(self):
        if self.medium == "af_xdp":
            # net_af_xdp frees a sent frame's mbuf only when it sends
            # again (it reaps the completion ring then): a ping makes
            # the last frame out the same kind as at the baseline's.
            self.ns(["ping", "-c", "1", "-W", "1", APP_IP], check=False)
        return self.stats()

    def _tentative(self):
        """Whether an IPv6 address of a port is still in its duplicate
        address detection."""
        return any(v.get(k) == "tentative" for v in self.telemetry("/ewyk/ports").values()
                   if isinstance(v, dict) for k in ("ip6_state", "ip6_link_local_state"))

    def idle_baseline(self, timeout=15, steady=0.4):
        """The stats once the appliance is idle: every address out of
        duplicate address detection, no connection, and the same mbufs in
        use over `steady` seconds. One sample alone may catch a frame of
        its own start-up in flight (IPv6's duplicate address probes, and
        the announcements and reports that end them), a baseline it would
        never come back to."""
        deadline = time.time() + timeout
        while self._tentative() and time.time() < deadline:
            time.sleep(0.1)
        last, since = None, time.time()
        while time.time() < deadline:
            s = self._idle_sample()
            if s["open_conns"] == 0 and s["mbufs_in_use_mbufs"] == last:
                if time.time() - since >= steady:
                    return s
            else:
                last, since = s["mbufs_in_use_mbufs"], time.time()
            time.sleep(0.2)
        raise AssertionError(f"not idle after {timeout}s: {s}")

    def wait_idle(self, baseline_mbufs, timeout=10):
        """Waits for connections to close and mbufs to return to idle."""
        deadline = time.time() + timeout
        s = self.stats()
        while time.time() < deadline:
            s = self._idle_sample()
            if s["open_conns"] == 0 and s["mbufs_in_use_mbufs"] == baseline_mbufs:
                return s
            time.sleep(0.2)
        # What the connections left hold says which side stopped short.
        t = self.telemetry("/ewyk/tcp")
        held = {k: t[k] for k in ("syn_received_conns", "time_wait_conns", "send_queue_mbufs",
                                  "conn_rings_used_count")}
        raise AssertionError(f"not idle after {timeout}s: open_conns={s['open_conns']} "
                             f"mbufs_in_use={s['mbufs_in_use_mbufs']} (idle {baseline_mbufs}); "
                             f"{held}")


@atexit.register
def _cleanup_all():
    for a in list(_live):
        a.close()
