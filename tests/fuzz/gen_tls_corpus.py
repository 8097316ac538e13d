#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed inputs of fuzz_tls (tests/fuzz/fuzz_tls.c explains the
format) into tests/fuzz/tls/corpus: real ClientHellos (Python's ssl makes
them in memory), whole or cut, with the steps held or not; garbage and an
oversized record; and, after a real handshake, HTTP through the session,
close_notify, and raw records that no key opens."""
import os
import ssl
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tls", "corpus")
GET = b"GET /a.txt HTTP/1.1\r\nHost: ewyk.test\r\n\r\n"
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")


def client_hello(version):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ctx.maximum_version = version
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    o = ctx.wrap_bio(inc, out, server_hostname="ewyk.test")
    try:
        o.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def chunk(ctl, data):
    return bytes([ctl]) + struct.pack(">H", len(data)) + data


def main():
    os.makedirs(OUT, exist_ok=True)
    ch13 = client_hello(ssl.TLSVersion.TLSv1_3)
    ch12 = client_hello(ssl.TLSVersion.TLSv1_2)
    seeds = {
        "raw_hello13": bytes([0]) + chunk(2, ch13),
        "raw_hello12_in_two_steps_held": bytes([8]) + chunk(0, ch12[:40]) +
        chunk(2, ch12[40:]) + chunk(4, b"") + chunk(2, b""),
        "raw_hello13_then_more_while_held": bytes([8]) + chunk(0, ch13) +
        chunk(0, bytes.fromhex("140303000101")) + chunk(6, b""),
        "garbage": bytes([0]) + chunk(2, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        "oversized_record": bytes([0]) + chunk(2, bytes.fromhex("1603014800") + bytes(64)),
        "hello_too_large": bytes([0]) + chunk(0, bytes.fromhex("1603014000") +
                                              bytes.fromhex("01004e20") + bytes(1000)),
        "tls13_get_close_notify": bytes([1]) + chunk(1, GET) + chunk(9, GET),
        "tls12_pipeline": bytes([3]) + chunk(1, GET * 50) + chunk(2, b""),
        "tls13_h2_preface": bytes([5]) + chunk(3, PREFACE),
        "tls13_then_raw_record": bytes([1]) + chunk(0, bytes.fromhex("1703030020") + bytes(32)),
        "tls12_renegotiate_raw_hello": bytes([3]) + chunk(0, ch12),
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"{len(seeds)} seeds in {OUT}")


if __name__ == "__main__":
    main()
