# SPDX-License-Identifier: BSD-3-Clause
"""The layout the code promises: docs/architecture.md names only files and
functions that exist, the two HTTP protocols never name each other, and a
library sees only the public headers of another."""
import os
import re

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def sources(tops=("app", "lib")):
    for top in tops:
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def test_architecture_names_exist():
    doc = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    files = list(sources())
    code = "".join(open(os.path.join(ROOT, f)).read() for f in files)
    # Files may be the tests' too; functions and structs are the code's.
    basenames = {os.path.basename(f) for f in sources(("app", "lib", "tests"))}
    missing = []
    for name in sorted(set(re.findall(r"\b([a-z][a-z0-9_]*\.[ch])\b", doc))):
        if name not in basenames:
            missing.append(name)
    for fn in sorted(set(re.findall(r"\b([a-z_][a-z0-9_]*)\(\)", doc))):
        if fn.startswith(("rte_", "nghttp2_", "gnutls_")):
            continue	# DPDK's, nghttp2's and GnuTLS's own
        # A definition: the name at the start of a line (the return type
        # stands on the line before), or a member of an ops table.
        if not re.search(rf"(?m)^{fn}\(|\.{fn}\s*=", code):
            missing.append(fn + "()")
    for struct in sorted(set(re.findall(r"`struct ([a-z_]+)`", doc))):
        if not re.search(rf"struct {struct} {{", code):
            missing.append("struct " + struct)
    assert not missing, f"docs/architecture.md names what the code lacks: {missing}"


def includes(path):
    return re.findall(r'(?m)^#include "([^"]+)"', open(os.path.join(ROOT, path)).read())


HTTP_DIR = os.path.join("lib", "http")


def http_files(prefix):
    """lib/http's files of one protocol: HTTP/1.1's are http1_*, HTTP/2's
    h2_*; what both share (http_*.h) belongs to neither."""
    return sorted(os.path.join(HTTP_DIR, f) for f in os.listdir(os.path.join(ROOT, HTTP_DIR))
                  if f.startswith(prefix) and f.endswith((".c", ".h")))


def http_includes(path, seen=None):
    """The headers of lib/http a file includes, directly or through lib/http's
    own headers."""
    seen = set() if seen is None else seen
    for inc in includes(path):
        own = os.path.join(HTTP_DIR, inc)
        if inc in seen or not os.path.exists(os.path.join(ROOT, own)):
            continue
        seen.add(inc)
        http_includes(own, seen)
    return seen


def test_protocols_do_not_name_each_other():
    """HTTP/1.1 and HTTP/2 meet only in the connection layer: no file of one
    includes a header of the other (not even through a shared header), or
    calls its functions."""
    for mine, other in (("http1_", "h2_"), ("h2_", "http1_")):
        files = http_files(mine)
        assert files, mine
        for path in files:
            named = sorted(i for i in http_includes(path) if i.startswith(other))
            assert not named, f"{path} includes {named}"
            text = open(os.path.join(ROOT, path)).read()
            used = {w for w in re.findall(rf"\b({other}[a-z_]+)\s*\(", text)}
            assert not used, f"{path} calls {sorted(used)}"


def test_libraries_see_only_public_headers_of_others():
    """A library includes its own headers, the public ones of another
    library (its include/ folder), and system or dependency headers."""
    libs = {d: d for d in os.listdir(os.path.join(ROOT, "lib"))
            if os.path.isdir(os.path.join(ROOT, "lib", d))}
    own, public = {}, {}
    for lib in libs:
        for d, _, files in os.walk(os.path.join(ROOT, "lib", lib)):
            for f in files:
                if f.endswith(".h"):
                    own.setdefault(f, set()).add(lib)
                    if os.path.basename(d) == "include" or not os.path.isdir(
                            os.path.join(ROOT, "lib", lib, "include")):
                        public.setdefault(f, set()).add(lib)
    bad = []
    for f in sources():
        parts = f.split(os.sep)
        if parts[0] != "lib":
            continue
        lib = parts[1]
        for inc in includes(f):
            if lib in own.get(inc, ()) or inc not in own:
                continue	# its own, or not ours (DPDK, nghttp2, libc)
            if not public.get(inc):
                bad.append(f"{f} includes {inc}, private to {sorted(own[inc])}")
    assert not bad, bad
