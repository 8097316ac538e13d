# SPDX-License-Identifier: BSD-3-Clause
"""Uploads through random packet loss: request bodies of 1 KB to 64 MB are
POSTed to /echo, which answers with the same bytes; the answer must hash
like the body. Loss is dropped on the kernel side of the tap as in
test_tcp_loss.py: here the kernel sends the data, so 'out' loses the
appliance's incoming segments and 'in' its ACKs and answer.
"""
import shutil
import tempfile

import pytest

from tcp_loss_util import (assert_whole, case_id, clear_loss, loss_drops, lossy_appliance,
                           random_files, set_loss, timed_curl)

SIZES = {"1K": 1024, "1M": 1 << 20, "64M": 64 << 20}

CASES = [
    ("none", 0, "1K"), ("none", 0, "1M"), ("none", 0, "64M"),
    ("both", 1, "1K"), ("both", 1, "1M"), ("both", 1, "64M"),
    ("out", 5, "1M"), ("in", 5, "1M"), ("both", 5, "1M"),
    ("both", 10, "1K"), ("out", 10, "1M"), ("both", 10, "1M"),
]


@pytest.fixture(scope="module")
def bodies():
    yield from random_files("ewyk-upload-", SIZES, "body{}.bin")


@pytest.fixture(scope="module")
def upload_appliance():
    d = tempfile.mkdtemp(prefix="ewyk-upload-www-")
    with open(f"{d}/index.html", "w") as f:
        f.write("upload tests\n")
    try:
        yield from lossy_appliance(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_upload_echo_through_loss(upload_appliance, bodies, tmp_path, case):
    a = upload_appliance
    direction, pct, size_name = case
    size = SIZES[size_name]
    body = f"{bodies['dir']}/body{size_name}.bin"
    out = tmp_path / "echo.bin"
    set_loss(a, direction, pct)
    try:
        # No "Expect: 100-continue": the body goes at once, as most clients send it.
        result = timed_curl(
            a, ["-X", "POST", "-H", "Expect:", "-H", "Content-Type: application/octet-stream",
                "--data-binary", f"@{body}", "-o", str(out), a.url("/echo")],
            "POST " + case_id(case), size, pct, moved=2 * size)
        dropped = loss_drops(a)
    finally:
        clear_loss(a)
    assert_whole(a, result, dropped, size, out, bodies["sha256"][size_name])
