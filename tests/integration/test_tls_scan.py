# SPDX-License-Identifier: BSD-3-Clause
"""An external TLS scanner, Debian's testssl.sh, against ewykd's default
TLS settings with an ECDSA and an RSA certificate: protocols and
vulnerabilities (--fast -p -U, about 60 s here). No finding may be LOW or
worse, nothing older than TLS 1.2 may be offered. It runs offline: the
scanner's reverse look-up and OCSP checks have no network to reach and say
so (docs/tls.md).

The cipher categories (testssl's -s, 48 s of its own sockets in bash) are
asked of ewykd directly by OpenSSL's client, one handshake each: every
category it can offer that the default leaves out must be refused, and
the default's own suites taken. What it can no longer offer (export,
single DES, 3DES, RC4, SEED, IDEA) -U's FREAK, LOGJAM and SWEET32 checks
probe with testssl's own sockets for export and 3DES; the rest the default
priority leaves out by starting from NONE (lib/tls's TLS_PRIORITY_DEFAULT),
and EWYK_TLS_PRIORITY shows these tests failing on a weaker one."""
import json
import os

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance
from tls_certs import CA

BAD = {"LOW", "MEDIUM", "HIGH", "CRITICAL"}
# The scanner's own limits (its openssl has no GOST engine nor RC4): WARN
# about the scanner, not the server.
LOCAL = {"engine_problem", "RC4"}
OLD = ("SSLv2", "SSLv3", "TLS1", "TLS1_1")


@pytest.fixture(scope="module")
def app(www, tmp_path_factory):
    ca = CA(tmp_path_factory.mktemp("pki"))
    ec = ca.issue("ec")
    rsa = ca.issue("rsa", kind="rsa")
    args = ["--tls-cert", ec[0], "--tls-key", ec[1], "--tls-cert", rsa[0], "--tls-key", rsa[1]]
    if os.environ.get("EWYK_TLS_PRIORITY"):	# to see the test fail on a weaker one
        args += ["--tls-priority", os.environ["EWYK_TLS_PRIORITY"]]
    yield from serve_module(Appliance(www=www["dir"], args=args))


def test_testssl_finds_nothing(app, tmp_path):
    report = tmp_path / "scan.json"
    r = app.ns(["testssl", "--fast", "-p", "-U", "--quiet", "--color", "0",
                "--warnings", "batch", "--jsonfile", str(report), f"{APP_IP}:443"],
               check=False, timeout=600)
    assert report.exists(), r.stdout + r.stderr
    findings = {f["id"]: f for f in json.loads(report.read_text())}
    bad = {i: f["finding"] for i, f in findings.items()
           if f["severity"] in BAD or (f["severity"] == "WARN" and i not in LOCAL)}
    assert not bad, bad
    for old in OLD:
        assert findings[old]["finding"].startswith("not offered"), findings[old]
    assert findings["TLS1_2"]["finding"] == "offered", findings["TLS1_2"]
    assert findings["TLS1_3"]["finding"].startswith("offered"), findings["TLS1_3"]
    assert findings["ALPN_HTTP2"]["finding"] == "h2", findings["ALPN_HTTP2"]
    for vuln in ("heartbleed", "CCS", "ticketbleed", "ROBOT", "secure_renego",
                 "secure_client_renego", "CRIME_TLS", "POODLE_SSL", "fallback_SCSV",
                 "SWEET32", "FREAK", "DROWN", "LOGJAM", "BEAST", "LUCKY13"):
        assert findings[vuln]["severity"] == "OK", findings[vuln]


# OpenSSL cipher strings of what the default leaves out, each one that
# OpenSSL 3's client can still offer (@SECLEVEL=0 lets it).
REFUSED = {
    "null": "eNULL",
    "anonymous": "aNULL",
    "cbc": "HIGH:MEDIUM:!AESGCM:!CHACHA20:!AESCCM:!ARIAGCM:!aNULL:!eNULL",
    "rsa-key-exchange": "kRSA",
    "dhe": "kDHE",
}
TAKEN = ["ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384",
         "ECDHE-ECDSA-CHACHA20-POLY1305"]


def handshake(app, ciphers):
    """OpenSSL's client over TLS 1.2 offering only ciphers: the suite
    agreed, or None when the server refused them all."""
    offered = app.ns(["openssl", "ciphers", "-tls1_2", ciphers + ":@SECLEVEL=0"],
                     check=False).stdout.strip()
    assert offered and any(not c.startswith("TLS_") for c in offered.split(":")), \
        f"this client cannot offer {ciphers!r}: the check would prove nothing"
    r = app.ns(["openssl", "s_client", "-connect", f"{APP_IP}:443", "-tls1_2",
                "-cipher", ciphers + ":@SECLEVEL=0", "-servername", "x"],
               check=False, input="", timeout=30)
    for line in r.stdout.splitlines():
        if "Cipher is " in line:
            agreed = line.split("Cipher is ", 1)[1].strip()
            return None if agreed == "(NONE)" else agreed
    return None


@pytest.mark.parametrize("category", sorted(REFUSED))
def test_cipher_category_left_out_is_refused(app, category):
    assert handshake(app, REFUSED[category]) is None


@pytest.mark.parametrize("suite", TAKEN)
def test_default_suites_are_taken(app, suite):
    assert handshake(app, suite) == suite
