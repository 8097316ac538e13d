# SPDX-License-Identifier: BSD-3-Clause
"""An external TLS scanner, Debian's testssl.sh, against ewykd's default
TLS settings with an ECDSA and an RSA certificate: protocols, cipher
categories and vulnerabilities (--fast -p -s -U, about 30-60 s here). No
finding may be LOW or worse, nothing older than TLS 1.2 may be offered.
It runs offline: the scanner's reverse look-up and OCSP checks have no
network to reach and say so (docs/tls.md)."""
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
    r = app.ns(["testssl", "--fast", "-p", "-s", "-U", "--quiet", "--color", "0",
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
