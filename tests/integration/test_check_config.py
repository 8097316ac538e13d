# SPDX-License-Identifier: BSD-3-Clause
"""`ewykd --check-config` tells the truth: it checks what a start would
(the EAL options by the EAL's own parser, the lcores the shards need, the
static tree loaded by the start's loader, the plugins opened, the state
directory and the access log writable, the file's keys each given once),
short of the ports, memory and the file prefix, and changes nothing: no
device, no DPDK run-time file, no directory or log file left behind. A bad
case is one line on stderr and exit status 2; a good one prints the
configuration resolved as a file that reads back to the same.

Each check runs in a network namespace of its own (a start would create
the tap device there: the check must not)."""
import itertools
import os
import re
import shutil
import subprocess

import pytest

from ewyk_harness import EWYKD, IFACE, NO_DAC, ROOT, run
from tls_certs import CA, write_key

HELLO = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")
_seq = itertools.count()


def check(args, eal=None, wrap=()):
    """ewykd --check-config in a namespace of its own: (rc, stdout, stderr,
    whether the namespace got a device, whether DPDK files were left)."""
    name = f"ewyk-cc{os.getpid()}-{next(_seq)}"
    if eal is None:
        eal = ["-l", "0-1", "--no-pci", "--vdev", f"net_tap0,iface={IFACE}",
               "--file-prefix", name]
    run(["ip", "netns", "add", name])
    try:
        p = subprocess.run(["ip", "netns", "exec", name, *wrap, EWYKD, *eal,
                            "--", "--check-config", *args],
                           capture_output=True, text=True, timeout=30)
        links = run(["ip", "-n", name, "-o", "link"]).stdout
        left = os.path.exists(f"/var/run/dpdk/{name}")
        return p.returncode, p.stdout, p.stderr, IFACE in links, left
    finally:
        run(["ip", "netns", "del", name], check=False)
        shutil.rmtree(f"/var/run/dpdk/{name}", ignore_errors=True)


def refused(args, words, **kw):
    rc, out, err, dev, left = check(args, **kw)
    lines = err.strip().splitlines()
    assert rc == 2, (args, rc, out, err)
    assert len(lines) == 1 and lines[0].startswith("ewykd: "), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert "configuration good" not in out
    assert not dev and not left
    return lines[0]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp("check")
    www = d / "www"
    www.mkdir()
    (www / "index.html").write_text("ewyk\n")
    locked = d / "locked-www"
    locked.mkdir()
    (locked / "index.html").write_text("ewyk\n")
    (locked / "locked.txt").write_text("no\n")
    (locked / "locked.txt").chmod(0)
    readonly = d / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    token = d / "token"
    token.write_text("s3cret-token-0123456789\n")
    token.chmod(0o600)
    return {"d": d, "www": str(www), "locked": str(locked), "readonly": str(readonly), "token": str(token)}


def test_a_good_configuration_is_printed_and_nothing_is_started(site):
    rc, out, err, dev, left = check(["--www", site["www"]])
    assert rc == 0, err
    assert "; configuration good" in out
    assert f"\nwww = {site['www']}\n" in out
    assert re.search(r"(?m)^args = -l 0-1 --no-pci --vdev net_tap0", out)
    # Every option of --help is in it, with its value or what its
    # absence means.
    helped = re.findall(r"(?m)^  --([a-z0-9-]+)", run([EWYKD, "--help"]).stdout)
    actions = {"config", "check-config", "help", "version"}
    for opt in set(helped) - actions:
        assert re.search(rf"(?m)^(; )?{opt} = ", out), opt
    assert not dev, "the check created the tap device"
    assert not left, "the check left DPDK run-time files"


def test_the_printed_configuration_reads_back_the_same(site, tmp_path):
    args = ["--www", site["www"], "--ip", "198.18.0.2/24", "--ip6", "2001:2::2/64",
            "--upstream", "a=198.18.0.5:8080", "--cache-control", "/=no-cache",
            "--mime-type", "dat=application/x-dat", "--tcp-cc", "newreno",
            "--state-api-token", site["token"], "--plugin", HELLO + ":hi",
            "--tx-cksum", "software", "--tso", "off", "--idle", "poll", "--handoff-us", "20",
            "--store-conflate", "off", "--access-log-format", "json"]
    rc, first, err, _, _ = check(args)
    assert rc == 0, err
    assert "tcp-cc = newreno" in first, "newreno was read as cubic"
    assert "\ntso = off\n" in first, first
    assert "s3cret" not in first, "the token itself must not be printed"
    saved = tmp_path / "saved.conf"
    saved.write_text(first)
    rc, again, err, _, _ = check(["--config", str(saved)], eal=["-l", "0-1"])
    assert rc == 0, err
    body = lambda text: text[text.index("[eal]"):]
    assert body(again).replace("args = -l 0-1\n", "") == \
        body(first).replace(re.search(r"(?m)^args = .*\n", first).group(0), ""), again


def test_www_is_loaded_by_the_start_loader(site):
    refused(["--www", "/nonexistent/ewyk-www"],
            ["--www", "/nonexistent/ewyk-www", "No such file or directory"])
    refused(["--www", site["token"]], ["--www", "not a directory"])
    # What the tree walk leaves out is named, as a start names it.
    rc, out, err, _, _ = check(["--www", site["locked"]], wrap=NO_DAC)
    assert rc == 0, err
    assert f"ewyk: www: skipped {site['locked']}/locked.txt: unreadable" in err, err
    assert "; www: 1 files, 5 bytes, 1 left out" in out, out


def test_nothing_to_serve_is_refused():
    refused([], ["nothing to serve", "--www"])


def test_plugins_are_opened(site):
    assert os.path.exists(HELLO), HELLO
    refused(["--www", site["www"], "--plugin", "/nonexistent/plugin.so"],
            ["--plugin /nonexistent/plugin.so", "No such file"])
    refused(["--www", site["www"], "--plugin", "/usr/lib/x86_64-linux-gnu/libnghttp2.so.14"],
            ["--plugin", "no ewyk_plugin_init()"])
    rc, out, err, _, _ = check(["--plugin", HELLO + ":hi"])
    assert rc == 0, err
    assert f"plugin = {HELLO}:hi" in out


def test_eal_options_are_read_by_the_eal(site):
    w = ["--www", site["www"]]
    refused(w, ["EAL option '--vdve': unknown to the EAL"],
            eal=["-l", "0-1", "--vdve", "net_tap0"])
    refused(w, ["invalid core list syntax"], eal=["-l", "0-1x"])
    refused(w, ["invalid channel number"], eal=["-l", "0-1", "-n", "x"])
    # The CPUs are this host's: a list it does not have is what a start
    # here would refuse.
    cpus = len(os.sched_getaffinity(0))
    refused(w, ["invalid core list"], eal=["-l", f"0-{cpus + 2}"])


def test_lcores_for_the_shards(site):
    refused(["--www", site["www"], "--shards", "2"],
            ["--shards 2", "needs 2 worker lcores, the EAL has 1"])
    refused(["--www", site["www"], "--reserved", "1"],
            ["--reserved 1", "no worker lcore"])


def test_state_dir_and_access_log_are_checked_and_left_alone(site, tmp_path):
    refused(["--www", site["www"], "--state-dir", site["readonly"]],
            ["--state-dir", "journal.ewyk", "Permission denied"], wrap=NO_DAC)
    refused(["--www", site["www"], "--state-dir", site["token"]],
            ["--state-dir", "Not a directory"])
    refused(["--www", site["www"], "--access-log", "/nonexistent/dir/access.log"],
            ["--access-log", "/nonexistent/dir/access.log", "No such file"])
    refused(["--www", site["www"], "--access-log", site["readonly"] + "/a.log"],
            ["--access-log", "Permission denied"], wrap=NO_DAC)
    state, log = tmp_path / "state", tmp_path / "access.log"
    rc, out, err, _, _ = check(["--www", site["www"], "--state-dir", str(state),
                                "--access-log", str(log)])
    assert rc == 0, err
    assert not state.exists() and not log.exists(), "the check left them behind"


def test_a_key_given_twice_is_refused_with_its_lines(site, tmp_path):
    conf = tmp_path / "twice.conf"
    conf.write_text(f"[ewykd]\nwww = {site['www']}\nmtu = 1500\n; a comment\nmtu = 9000\n")
    refused(["--config", str(conf)], [f"{conf}:5: mtu given twice (first on line 3)"])
    conf.write_text(f"[eal]\nargs = -l 0-1\nargs = -l 0\n[ewykd]\nwww = {site['www']}\n")
    refused(["--config", str(conf)], [f"{conf}:3: args given twice (first on line 2)"])
    conf.write_text(f"[ewykd]\nwww = {site['www']}\n[eal]\nargs = -l 0-1\n[ewykd]\nmtu = 9000\n")
    refused(["--config", str(conf)], [f"{conf}:5: section [ewykd] given twice (first on line 1)"])
    # The repeatable keys add an item each.
    conf.write_text(f"[ewykd]\nwww = {site['www']}\ncache-control = /a=no-cache\n"
                    "cache-control = /b=no-store\n")
    rc, out, err, _, _ = check(["--config", str(conf)])
    assert rc == 0, err
    assert "cache-control = /a=no-cache\ncache-control = /b=no-store\n" in out


def test_config_anywhere_on_the_command_line(site, tmp_path):
    conf = tmp_path / "anywhere.conf"
    conf.write_text(f"[ewykd]\nwww = {site['www']}\nmtu = 9000\n")
    for argv in (["-l", "0-1", "--config", str(conf), "--", "--check-config"],
                 ["-l", "0-1", f"--config={conf}", "--check-config", "--"],
                 ["-l", "0-1", "--", "--config", str(conf), "--check-config"],
                 ["--config", str(conf), "--check-config"]):
        r = run([EWYKD, *argv], check=False)
        assert r.returncode == 0, (argv, r.stderr)
        assert "\nmtu = 9000\n" in r.stdout, argv
    # The EAL options before -- are the EAL's, --config taken out of them.
    r = run([EWYKD, "-l", "0-1", "--config", str(conf), "--", "--check-config"])
    assert re.search(r"(?m)^args = -l 0-1$", r.stdout), r.stdout
    r = run([EWYKD, "-l", "0-1", "--config", str(conf), "--", "--config", str(conf),
             "--check-config"], check=False)
    assert r.returncode == 2 and "--config given twice" in r.stderr, r.stderr


def test_tls_pairs_are_loaded_as_a_start_loads_them(site, tmp_path):
    """Each --tls-cert and --tls-key pair goes through lib/tls's loader:
    a key that is not the certificate's, an expired certificate, a pair
    short of its key are refused; good pairs are printed in order, each
    with its key and OCSP response, and read back the same."""
    ca = CA(tmp_path)
    cert, key, x509 = ca.issue("good")
    rsa_cert, rsa_key, _ = ca.issue("rsa", kind="rsa")
    old_cert, old_key, _ = ca.issue("old", days=-1, not_before_days=-30)
    other = write_key(str(tmp_path / "other.key"))
    ocsp = ca.ocsp_response(x509, str(tmp_path / "good.ocsp"))
    w = ["--www", site["www"]]
    refused(w + ["--tls-cert", cert, "--tls-key", other], ["does not match"])
    refused(w + ["--tls-cert", old_cert, "--tls-key", old_key], ["expired on"])
    refused(w + ["--tls-cert", cert, "--tls-key", key, "--tls-cert", rsa_cert],
            ["2 --tls-cert and 1 --tls-key"])
    rc, out, err, _, _ = check(w + ["--tls-cert", cert, "--tls-key", key, "--tls-ocsp", ocsp,
                                    "--tls-cert", rsa_cert, "--tls-key", rsa_key])
    assert rc == 0, err
    assert "; checked: the TLS certificates and keys" in out
    assert (f"\ntls-cert = {cert}\ntls-key = {key}\ntls-ocsp = {ocsp}\n"
            f"tls-cert = {rsa_cert}\ntls-key = {rsa_key}\n") in out, out
    assert "\ntls-port = 443\n" in out
    saved = tmp_path / "saved.conf"
    saved.write_text(out)
    rc, again, err, _, _ = check(["--config", str(saved)], eal=["-l", "0-1"])
    assert rc == 0, err
    assert again[again.index("[ewykd]"):] == out[out.index("[ewykd]"):]
