# SPDX-License-Identifier: BSD-3-Clause
"""docs/architecture.md names files and functions; each must exist, so the
map cannot silently drift from the code."""
import os
import re

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def sources():
    for top in ("app", "lib"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def test_architecture_names_exist():
    doc = open(os.path.join(ROOT, "docs", "architecture.md")).read()
    files = list(sources())
    code = "".join(open(os.path.join(ROOT, f)).read() for f in files)
    basenames = {os.path.basename(f) for f in files}
    missing = []
    for name in sorted(set(re.findall(r"\b([a-z][a-z0-9_]*\.[ch])\b", doc))):
        if name not in basenames:
            missing.append(name)
    for fn in sorted(set(re.findall(r"\b([a-z_][a-z0-9_]*)\(\)", doc))):
        if fn.startswith(("rte_", "nghttp2_")):
            continue	# DPDK's and nghttp2's own
        # A definition: the name at the start of a line (the return type
        # stands on the line before), or a member of an ops table.
        if not re.search(rf"(?m)^{fn}\(|\.{fn}\s*=", code):
            missing.append(fn + "()")
    for struct in sorted(set(re.findall(r"`struct ([a-z_]+)`", doc))):
        if not re.search(rf"struct {struct} {{", code):
            missing.append("struct " + struct)
    assert not missing, f"docs/architecture.md names what the code lacks: {missing}"
