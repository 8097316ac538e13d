# SPDX-License-Identifier: BSD-3-Clause
"""Headless Chromium driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: commands on fd 3, answers on fd 4, each message
ending in a NUL byte), so that a page runs in real time for as long as a
test wants before its DOM is read and its screenshot taken. No network
port, no library beyond the standard one."""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


class Browser:
    def __init__(self, width=1400, height=1250):
        self.profile = tempfile.mkdtemp(prefix="ewyk-chromium-")
        cmd_r, self.cmd_w = os.pipe()
        self.resp_r, resp_w = os.pipe()

        def fds():
            os.dup2(cmd_r, 3)
            os.dup2(resp_w, 4)

        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
             "--hide-scrollbars", f"--user-data-dir={self.profile}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=fds)
        os.close(cmd_r)
        os.close(resp_w)
        self.buf = b""
        self.seq = 0
        self.session = None
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {
                "targetId": target, "flatten": True})["sessionId"]
            self.call("Page.enable")
            self.call("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        except BaseException:
            self.close()
            raise

    def call(self, method, params=None, timeout=30):
        self.seq += 1
        msg = {"id": self.seq, "method": method, "params": params or {}}
        if self.session is not None and not method.startswith(("Target.", "Browser.")):
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.seq:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            left = deadline - time.time()
            if left <= 0 or not select.select([self.resp_r], [], [], left)[0]:
                raise TimeoutError(f"no answer to {method}")
            data = os.read(self.resp_r, 1 << 20)
            if not data:
                raise RuntimeError("chromium went away")
            self.buf += data

    def navigate(self, url):
        self.call("Page.navigate", {"url": url})

    def dom(self):
        return self.call("Runtime.evaluate", {
            "expression": "document.documentElement.outerHTML",
            "returnByValue": True})["result"]["value"]

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.cmd_w)
        os.close(self.resp_r)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
