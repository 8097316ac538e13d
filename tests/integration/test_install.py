# SPDX-License-Identifier: BSD-3-Clause
"""`meson install` installs ewyk as a library and a daemon: the binaries,
the handler header with a pkg-config file that builds a plugin out of the
tree, the example plugin (built, and its source), the systemd units, an
example configuration, a default page and the documentation; and every
path the installed units and configuration name is there.

The install goes into a temporary DESTDIR (meson install --destdir), with
the build's prefix; pkg-config is pointed at it (PKG_CONFIG_PATH, and
PKG_CONFIG_SYSROOT_DIR for the -I it gives). The installed ewykd then runs
in the usual test namespace with the plugin built there, and curl gets its
route. Nothing is installed on the host."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from ewyk_harness import ROOT, Appliance, run

BUILD = os.path.join(ROOT, "build")


def build_option(name):
    for o in json.loads(run(["meson", "introspect", "--buildoptions", BUILD]).stdout):
        if o["name"] == name:
            return o["value"]
    raise KeyError(name)


@pytest.fixture(scope="module")
def dest():
    d = tempfile.mkdtemp(prefix="ewyk-destdir-")
    try:
        r = run(["meson", "install", "-C", BUILD, "--destdir", d], check=False,
                timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        prefix = build_option("prefix")
        paths = {k: os.path.join(prefix, build_option(k))
                 for k in ("bindir", "libdir", "includedir", "datadir", "sysconfdir")}
        yield {"root": d, "prefix": prefix, **paths}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def inside(dest, path):
    """path (absolute, as installed) within the DESTDIR."""
    return dest["root"] + path


def test_the_install_plan_puts_each_piece_where_it_is_looked_for():
    """Meson's plan, read without installing (a second, where the install
    takes a build and a copy): the pkg-config file where pkg-config looks
    under the prefix, the handler header beside the other headers, the
    plugins in their folder."""
    plan = set(json.loads(run(["meson", "introspect", "--installed", BUILD]).stdout).values())
    prefix = build_option("prefix")
    libdir = os.path.join(prefix, build_option("libdir"))
    want = {os.path.join(libdir, "pkgconfig", "ewyk.pc"),
            os.path.join(prefix, build_option("includedir"), "ewyk", "ewyk_http.h"),
            os.path.join(libdir, "ewyk", "plugins", "ewyk-hello.so"),
            os.path.join(prefix, build_option("bindir"), "ewykd")}
    assert want <= plan, sorted(want - plan)


def test_what_is_installed(dest):
    want = [
        f"{dest['bindir']}/ewykd", f"{dest['bindir']}/ewyk-exporter",
        f"{dest['includedir']}/ewyk/ewyk_http.h",
        f"{dest['libdir']}/pkgconfig/ewyk.pc",
        f"{dest['libdir']}/ewyk/plugins/ewyk-hello.so",
        f"{dest['datadir']}/doc/ewyk/examples/hello.c",
        f"{dest['datadir']}/doc/ewyk/README.md",
        f"{dest['datadir']}/ewyk/www/index.html",
        f"{dest['datadir']}/ewyk/dashboard/index.html",
        f"{dest['sysconfdir']}/ewyk/ewykd.conf",
    ]
    want += [f"{dest['datadir']}/doc/ewyk/{f}"
             for f in os.listdir(os.path.join(ROOT, "docs")) if not f.endswith(".build")]
    want += [f"{dest['prefix']}/lib/systemd/system/{u}"
             for u in ("ewykd.service", "ewyk-exporter.service", "ewyk-hugepages.service")]
    missing = [p for p in want if not os.path.isfile(inside(dest, p))]
    assert not missing, missing
    for b in ("ewykd", "ewyk-exporter"):
        assert os.access(inside(dest, f"{dest['bindir']}/{b}"), os.X_OK), b


def test_the_paths_the_units_and_configuration_name_exist(dest):
    named = []
    units = os.path.join(inside(dest, dest["prefix"]), "lib", "systemd", "system")
    for u in os.listdir(units):
        text = open(os.path.join(units, u)).read()
        named += re.findall(r"(?m)^ExecStart=(/\S+)", text)
        named += re.findall(r"--config (/\S+)", text)
        named += re.findall(r"(?m)^Documentation=file://(/\S+)", text)
    conf = open(inside(dest, f"{dest['sysconfdir']}/ewyk/ewykd.conf")).read()
    named += re.findall(r"(?m)^www = (\S+)", conf)
    named += re.findall(r"(?m)^; plugin = (/[^:\s]+)", conf)
    assert len(named) >= 9, named
    # What is installed is in the DESTDIR; the rest (/bin/sh) the host's.
    ours = lambda p: p.startswith((dest["prefix"] + "/", dest["sysconfdir"] + "/"))
    missing = [p for p in named if not os.path.exists(inside(dest, p) if ours(p) else p)]
    assert not missing, missing
    assert sum(map(ours, named)) >= 8, named
    assert "@" not in re.sub(r"@system-service", "", conf + "".join(
        open(os.path.join(units, u)).read() for u in os.listdir(units))), "unfilled"


def test_installed_configuration_checks_good(dest, tmp_path):
    """The example configuration, its paths taken inside the DESTDIR, is
    one the installed ewykd accepts (--check-config)."""
    conf = open(inside(dest, f"{dest['sysconfdir']}/ewyk/ewykd.conf")).read()
    www = re.search(r"(?m)^www = (\S+)", conf).group(1)
    f = tmp_path / "ewykd.conf"
    f.write_text(conf.replace(f"www = {www}", f"www = {inside(dest, www)}"))
    r = run([inside(dest, f"{dest['bindir']}/ewykd"), "--config", str(f), "--check-config"],
            check=False)
    assert r.returncode == 0, r.stderr
    assert "; www: 1 files" in r.stdout


def test_installing_again_keeps_an_edited_configuration(dest):
    path = inside(dest, f"{dest['sysconfdir']}/ewyk/ewykd.conf")
    with open(path, "a") as f:
        f.write("; edited by the operator\n")
    r = run(["meson", "install", "-C", BUILD, "--destdir", dest["root"], "--no-rebuild"],
            check=False, timeout=600)
    assert r.returncode == 0, r.stderr
    assert open(path).read().endswith("; edited by the operator\n")


def test_a_plugin_built_out_of_tree_with_pkg_config_is_served(dest, tmp_path):
    env = dict(os.environ,
               PKG_CONFIG_PATH=inside(dest, f"{dest['libdir']}/pkgconfig"),
               PKG_CONFIG_SYSROOT_DIR=dest["root"])
    work = tmp_path / "plugin"
    work.mkdir()
    shutil.copy(inside(dest, f"{dest['datadir']}/doc/ewyk/examples/hello.c"), work)
    # Word for word what docs/http.md says, in a directory of its own:
    # nothing of the source tree is reachable from it.
    r = subprocess.run("cc -shared -fPIC $(pkg-config --cflags --libs ewyk) hello.c "
                       "-o hello.so -Werror", shell=True, cwd=work, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ROOT not in r.args
    cflags = run(["pkg-config", "--cflags", "ewyk"], env=env).stdout
    assert cflags.strip() == f"-I{inside(dest, dest['includedir'])}/ewyk", cflags
    plugindir = run(["pkg-config", "--variable=plugindir", "ewyk"], env=env).stdout.strip()
    assert plugindir == inside(dest, f"{dest['libdir']}/ewyk/plugins"), plugindir
    ewykd = inside(dest, f"{dest['bindir']}/ewykd")
    www = inside(dest, f"{dest['datadir']}/ewyk/www")
    with Appliance(www=www, args=["--plugin", f"{work}/hello.so:built out of tree"],
                   demo=False, binary=ewykd) as a:
        r = a.ns(["curl", "-sS", "-i", a.url("/hello?name=pkg-config")])
        assert r.stdout.startswith("HTTP/1.1 200"), r.stdout
        assert "x-plugin: hello" in r.stdout.lower()
        assert r.stdout.endswith("built out of tree, pkg-config\n"), r.stdout
        page = a.ns(["curl", "-sS", a.url("/")]).stdout
        assert "ewyk serves" in page, page
        assert a.ns(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                     a.url("/echo")]).stdout == "404", "demo routes are off"
