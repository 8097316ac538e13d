# SPDX-License-Identifier: BSD-3-Clause
"""What deploy/ ships for production: the systemd units (as the build
fills them in) pass
`systemd-analyze verify`, the alert rules pass `promtool check rules`,
and every Kubernetes manifest is valid against the API's schemas
(tests/k8s/validate.mjs, schemas bundled in its npm packages) and has
what a fleet on NIC hosts needs. Nothing is installed on the host."""
import os
import re
import shutil
import subprocess

from ewyk_harness import ROOT

DEPLOY = os.path.join(ROOT, "deploy")
BUILT = os.path.join(ROOT, "build", "deploy")	# the units, paths filled in
UNITS = ("ewykd.service", "ewyk-hugepages.service", "ewyk-exporter.service")
K8S_VALIDATOR = os.path.join(ROOT, "tests", "k8s")


def test_systemd_units_verify(tmp_path):
    # The units as the build made them from deploy/*.service.in, naming
    # the installed binaries (BINDIR of the prefix, test_install.py checks
    # they are there once installed); verify checks that ExecStart= exists,
    # so copies of the units point it at the build tree instead. Nothing
    # else changes.
    bindir = re.search(r"(?m)^ExecStart=(/\S+)/ewykd ",
                       open(os.path.join(BUILT, "ewykd.service")).read()).group(1)
    for u in UNITS:
        text = open(os.path.join(BUILT, u)).read()
        assert f"{bindir}/" in text or u == "ewyk-hugepages.service"
        (tmp_path / u).write_text(text.replace(f"{bindir}/",
                                               os.path.join(ROOT, "build", "app") + "/"))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no",
                        *[str(tmp_path / u) for u in UNITS]],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stdout + r.stderr


def test_units_agree_on_the_telemetry_socket():
    """ewykd keeps its socket in /var/run/dpdk/PREFIX (where
    dpdk-telemetry.py -f PREFIX looks): its unit's RuntimeDirectory= is
    that directory, for the file prefix of its configuration, and the
    exporter's unit asks for that prefix."""
    ewykd = open(os.path.join(DEPLOY, "ewykd.service.in")).read()
    exporter = open(os.path.join(DEPLOY, "ewyk-exporter.service.in")).read()
    conf = open(os.path.join(DEPLOY, "ewykd.conf.in")).read()
    rundir = re.search(r"(?m)^RuntimeDirectory=(\S+)", ewykd).group(1)
    prefix = re.search(r"--file-prefix (\S+)", re.search(r"(?m)^args = .*", conf).group(0))
    assert rundir == f"dpdk/{prefix.group(1)}"
    assert f"--file-prefix {prefix.group(1)}" in exporter
    assert re.search(r"(?m)^(Requires|After)=.*ewyk-hugepages\.service", ewykd)
    assert re.search(r"(?m)^LimitMEMLOCK=infinity", ewykd)


def test_alert_rules():
    r = subprocess.run(["promtool", "check", "rules", os.path.join(DEPLOY, "ewyk-alerts.yml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_tls_alerts_fire_when_they_should():
    """promtool's rule tests: a certificate 10 days from expiry is reported
    (not one 30 days away), and so is a refused reload."""
    r = subprocess.run(["promtool", "test", "rules",
                        os.path.join(ROOT, "tests", "integration", "ewyk-alerts-test.yml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout, r.stdout


def validate(d):
    return subprocess.run(["node", os.path.join(K8S_VALIDATOR, "validate.mjs"), d],
                          capture_output=True, text=True, timeout=120)


def test_kubernetes_manifests_valid():
    assert os.path.isdir(os.path.join(K8S_VALIDATOR, "node_modules", "kubernetes-models")), \
        "deploy/setup.sh installs the validator (npm ci in tests/k8s)"
    r = validate(os.path.join(DEPLOY, "k8s"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("all valid")
    n = len([f for f in os.listdir(os.path.join(DEPLOY, "k8s")) if f.endswith(".yaml")])
    assert r.stdout.count("\nok   ") + r.stdout.startswith("ok   ") >= n


def test_kubernetes_validator_rejects_broken_manifests(tmp_path):
    for n, (old, new, message) in enumerate((
            ("containerPort: 9110", 'containerPort: "metrics"',
             "containerPort must be integer"),
            ("terminationGracePeriodSeconds: 30", "terminationGracePeriodSeconds: 10",
             "FAIL terminationGracePeriodSeconds"),
            ('cpu: "4"', 'cpu: "3500m"', "FAIL ewykd: whole CPUs"))):
        d = tmp_path / f"k8s{n}"
        shutil.copytree(os.path.join(DEPLOY, "k8s"), d)
        ds = d / "daemonset.yaml"
        assert old in ds.read_text()
        ds.write_text(ds.read_text().replace(old, new))
        r = validate(str(d))
        assert r.returncode == 1 and message in r.stdout, r.stdout
