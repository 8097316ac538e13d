# SPDX-License-Identifier: BSD-3-Clause
"""Safe defaults: only static files are served unless the configuration
turns more on. The demonstration routes (they store, reflect and burn CPU
on request) come with --demo-routes, the journaled store's API with
--state-api, and --state-api-token makes the latter ask for a bearer
token."""

from ewyk_harness import Appliance

DEMO = ["/echo", "/kv/k", "/bytes?n=10", "/spin?us=1", "/delay?ms=1",
        "/blocking-delay?ms=1", "/either?ms=1", "/upload"]
TOKEN = "s3cret-t0ken-0123456789"


def status(a, path, *args):
    r = a.ns(["curl", "-sS", "-m", "10", "-o", "/dev/null", "-w", "%{http_code}", *args,
              a.url(path)])
    return r.stdout


def test_by_default_only_static_files(www):
    with Appliance(www=www["dir"], demo=False) as a:
        assert status(a, "/hello.txt") == "200"
        for path in DEMO + ["/v1/state/k"]:
            assert status(a, path) == "404", path
        assert status(a, "/kv/k", "-X", "PUT", "--data-binary", "x") == "405"
        http = a.telemetry("/ewyk/http")
        assert not any(v.get("path") in ("/echo", "/kv/", "/v1/state/")
                       for v in http.values() if isinstance(v, dict)), http


def test_demo_routes_and_state_api_when_asked(www):
    with Appliance(www=www["dir"], demo=False,
                   args=["--demo-routes", "--state-api"]) as a:
        assert status(a, "/echo", "--data-binary", "x") == "200"
        assert status(a, "/kv/k", "-X", "PUT", "--data-binary", "x") == "200"
        assert status(a, "/v1/state/k", "-X", "PUT", "--data-binary", "x") == "200"


def test_state_api_token(www, tmp_path):
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    with Appliance(www=www["dir"], demo=False,
                   args=["--state-api-token", str(token)]) as a:
        put = ["-X", "PUT", "--data-binary", "v"]
        assert status(a, "/v1/state/k", *put) == "401"
        assert status(a, "/v1/state/k", *put, "-H", "Authorization: Bearer wrong") == "401"
        assert status(a, "/v1/state/k", *put, "-H",
                      f"Authorization: Bearer {TOKEN}x") == "401"
        assert status(a, "/v1/state/k", *put, "-H",
                      f"Authorization: Bearer {TOKEN[:-1]}") == "401"	# its start only
        assert status(a, "/v1/state/k", *put, "-H", f"Authorization: Bearer {TOKEN}") == "200"
        r = a.ns(["curl", "-sS", "-m", "10", "-D", "-", "-o", "/dev/null", a.url("/v1/state/k")])
        assert "www-authenticate: bearer" in r.stdout.lower(), r.stdout
        r = a.ns(["curl", "-sS", "-m", "10", "--http2-prior-knowledge", "-H",
                  f"authorization: bearer {TOKEN}", a.url("/v1/state/k")])
        assert r.stdout == "v"
        assert status(a, "/bytes?n=10") == "404"	# no demo routes
