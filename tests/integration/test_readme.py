# SPDX-License-Identifier: BSD-3-Clause
"""The README's "Build and run by hand" works as written: its commands are
read from README.md (so that an edit which breaks them fails here) and run
word for word from the project's root: set-up and build, the appliance in
the background where the README has it run in a shell of its own, the
client's commands once it says "serving", Ctrl-C (SIGINT), the clean-up.
Both curls must get the page.

The README names its namespace "demo" and its DPDK file prefix "demo":
names other runs may use at the same time. The commands therefore run in
a mount namespace of their own, with /run/netns and /run/dpdk fresh in it,
so that both names are private to this test and vanish with it whatever
happens. The build is the tree's (`meson setup build` on a configured
tree says so and goes on; `ninja -C build` has nothing to do)."""
import os
import re
import shutil
import signal
import subprocess
import tempfile

from ewyk_harness import ROOT

README = os.path.join(ROOT, "README.md")
SECTION = "## Build and run by hand"
BUDGET = 600	# deploy/setup.sh may install a missing package


def blocks():
    """The section's code blocks (indented by four spaces), each a list of
    commands, a line ending in a backslash joined with the next."""
    text = open(README).read()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end >= 0 else len(text)]
    found, cur = [], []
    for line in section.splitlines() + [""]:
        if line.startswith("    "):
            cur.append(line[4:])
        elif cur and line.strip() == "":
            found.append(cur)
            cur = []
        elif cur:
            found.append(cur)
            cur = []
    commands = []
    for b in found:
        joined = re.sub(r"\\\n", " ", "\n".join(b))
        commands.append([c for c in joined.splitlines() if c.strip()])
    return commands


def test_by_hand_example_word_for_word():
    b = blocks()
    assert len(b) == 4, b
    build, serve, client, cleanup = b
    assert any("ewykd --help" in c for c in build), build
    assert "ewykd" in serve[-1] and "--www" in serve[-1], serve
    assert sum("curl" in c for c in client) == 2, client
    work = tempfile.mkdtemp(prefix="ewyk-readme-")
    log, out = os.path.join(work, "ewykd.log"), os.path.join(work, "client.out")
    q = lambda cmds: "\n".join(cmds)
    script = f"""
set -u
mkdir -p /run/netns /run/dpdk
mount -t tmpfs ewyk-readme /run/netns
mount -t tmpfs ewyk-readme /run/dpdk
cd {ROOT}
set -e
{{
{q(build)}
}} >/dev/null
{q(serve[:-1])}
: > {log}
{serve[-1]} > {log} 2>&1 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null' EXIT
for i in $(seq 200); do grep -q serving {log} && break; sleep 0.1; done
grep -q serving {log}
{{
{q(client)}
}} > {out}
kill -INT $pid
set +e
wait $pid
echo "ewykd exit status $?"
set -e
trap - EXIT
{q(cleanup)}
"""
    p = subprocess.Popen(["unshare", "--mount", "--propagation", "private",
                          "bash", "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=BUDGET)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)	# the session this test started
        stdout, stderr = p.communicate()
    served = open(log).read() if os.path.exists(log) else ""
    got = open(out).read() if os.path.exists(out) else ""
    shutil.rmtree(work, ignore_errors=True)
    assert p.returncode == 0, (stdout[-2000:], stderr[-2000:], served)
    assert "ewykd exit status 0" in stdout, (stdout, served)
    assert got.count("<h1>ewyk serves</h1>") == 2, got
    assert "serving 198.18.0.2/24 and 2001:2::2/64 port 80" in served, served
