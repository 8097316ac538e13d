# SPDX-License-Identifier: BSD-3-Clause
"""Malformed frames, crafted with scapy on the kernel side of the tap, are
counted as drops by reason, and the appliance keeps serving."""
import re

from ewyk_harness import APP_IP, HOST_IP, IFACE

# Each case: drop reason expected, scapy expression of the frame (raw bytes
# where a layer must be cut short). E is the Ethernet header to the
# appliance; T a valid TCP segment header towards port 80.
CASES = {
    # An 802.1Q header belongs to the Ethernet header; a frame that stops
    # inside it has a truncated Ethernet header. (Frames shorter than 14
    # bytes cannot be sent: the kernel refuses them on a packet socket.)
    "eth_short": "raw(Ether(dst=D, src=S, type=0x8100)) + b'\\x00'",
    "ip_short": "raw(Ether(dst=D, src=S, type=0x0800)) + raw(IP(src=H, dst=A))[:12]",
    "ip_cksum": "Ether(dst=D, src=S)/IP(src=H, dst=A, chksum=0x1234)/TCP(dport=80, flags='S')",
    "tcp_cksum": "Ether(dst=D, src=S)/IP(src=H, dst=A)/TCP(dport=80, flags='S', chksum=0xdead)",
    "tcp_doff": "Ether(dst=D, src=S)/IP(src=H, dst=A)/TCP(dport=80, flags='S', dataofs=15)",
    "ip_totlen": "Ether(dst=D, src=S)/IP(src=H, dst=A, len=1400)/TCP(dport=80, flags='S')",
    "ip_hdrlen": "Ether(dst=D, src=S)/IP(src=H, dst=A, ihl=3)/TCP(dport=80, flags='S')",
    "ip_fragment": "Ether(dst=D, src=S)/IP(src=H, dst=A, flags='MF')/TCP(dport=80, flags='S')",
}


def test_malformed_frames_are_counted_and_dropped(appliance):
    appliance.ns(["ping", "-c", "1", "-W", "1", APP_IP])
    neigh = appliance.ip("neigh", "show", APP_IP).stdout
    dmac = re.search(r"lladdr ([0-9a-f:]{17})", neigh).group(1)
    before = appliance.stats()["drop_by_reason_pkts"]
    frames = ",\n".join(f"    ({r!r}, {expr})" for r, expr in CASES.items())
    appliance.ns_python(f"""
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import Ether, IP, TCP, raw, sendp, get_if_hwaddr, conf
conf.verb = 0
D, S, H, A = {dmac!r}, get_if_hwaddr({IFACE!r}), {HOST_IP!r}, {APP_IP!r}
frames = [
{frames}
]
for reason, f in frames:
    sendp(f if isinstance(f, bytes) else raw(f), iface={IFACE!r}, count=3)
""")
    # The appliance keeps serving after all of it.
    r = appliance.ns(["curl", "-sS", "-m", "5", appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"
    after = appliance.stats()["drop_by_reason_pkts"]
    for reason in CASES:
        assert after[reason] - before[reason] == 3, (reason, before[reason], after[reason])
