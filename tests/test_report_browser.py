"""The report in a real browser (headless Chromium): clicking filters, no console errors, 20,000 results."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from harness.judge.summary import summarize
from reports.html import write_html
from tests.test_report import ROOT, synthetic

# ---- the page in headless Chromium -------------------------------------------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium)")


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (fds 3/4): no websocket, no extra package."""

    def __init__(self) -> None:
        assert CHROMIUM is not None
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="convdiff-chromium-")

        def wire() -> None:  # in the child: the command pipe on fd 3, the response pipe on fd 4
            a, b = os.dup(cmd_r), os.dup(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             f"--user-data-dir={self.profile}", "--window-size=1400,1000", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, close_fds=False)  # fds 3/4 are wired in the child
        os.close(cmd_r)
        os.close(res_w)
        self.buf, self.next_id, self.events = b"", 0, []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.res_r], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.res_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method: str, session: bool = False, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read(timeout)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            ev = self._read(timeout)
            if ev.get("method") == method:
                return ev
            self.events.append(ev)

    def js(self, expr: str) -> Any:
        res = self.call("Runtime.evaluate", session=True, expression=expr, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def errors(self) -> list[str]:
        out = []
        for ev in self.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(str(p.get("exceptionDetails")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(str(p.get("args")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", ""))
        return out

    def open(self, path: Path) -> float:
        """Navigate and wait for load and the first frame; seconds from navigation start."""
        self.call("Page.navigate", session=True, url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired", timeout=60)
        return self.js("new Promise(r => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0)))") / 1000

    def click(self, selector: str, corner: bool = False) -> None:
        """A real mouse click at the element's centre (or just inside its top-left corner)."""
        at = "[r.x + 2, r.y + 2]" if corner else "[r.x + r.width / 2, r.y + r.height / 2]"
        box = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
                      f" const r = e.getBoundingClientRect(); return {at}; }})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"]))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close", timeout=5)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self.cmd_w)
        os.close(self.res_r)
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture
def browser():
    b = Browser()
    yield b
    b.close()


VISIBLE = "Array.from(document.querySelectorAll('details.res')).filter(e => !e.hidden)"


@needs_chromium
def test_browser_click_cell_filters_rows(browser: Browser, tmp_path: Path) -> None:
    recs = synthetic(400)
    page = tmp_path / "report.html"
    write_html(page, recs, summarize(recs, {"command": "convdiff run (synthetic)"}), known_path=None)
    browser.open(page)
    total = browser.js(f"{VISIBLE}.length")
    assert total == sum(r.status != "pass" for r in recs)
    browser.click("#cell-conv2d-torch-cpu", corner=True)
    rows = browser.js(f"{VISIBLE}.map(e => [e.dataset.o, e.dataset.b, e.dataset.d])")
    want = sum(r.status != "pass" and r.op == "conv2d" and r.backend == "torch" for r in recs)
    assert len(rows) == want > 0 and all(r == ["conv2d", "torch", "cpu"] for r in rows)
    assert browser.js("document.querySelector('#cell-conv2d-torch-cpu').classList.contains('sel')")
    assert browser.js("document.querySelector('#shown').textContent") == str(want)
    # the status badge inside a cell narrows further; the search box too
    browser.click("#cell-conv2d-torch-cpu .st-mismatch")
    statuses = browser.js(f"{VISIBLE}.map(e => e.dataset.s)")
    assert statuses and set(statuses) == {"mismatch"}
    browser.js("document.querySelector('#f-clear').click()")
    assert browser.js(f"{VISIBLE}.length") == total
    one = next(r for r in recs if r.status == "crash")
    q = one.case_id.split("[")[0] + "["
    browser.js(f"const q = document.querySelector('#f-q'); q.value = '{q}'; q.dispatchEvent(new Event('input'))")
    assert browser.js(f"{VISIBLE}.map(e => e.querySelector('summary .mono').textContent)") == [f"{one.file}::{one.case_id}"]
    browser.js("document.querySelector('#f-clear').click()")
    browser.click("#cell-conv2d-torch-cpu", corner=True)
    browser.js("document.querySelector('details.res:not([hidden])').open = true")
    assert not browser.errors(), browser.errors()
    browser.screenshot(ROOT / "reports" / "out" / "report_browser_test.png")


@needs_chromium
@pytest.mark.slow
def test_browser_20000_results_open_and_filter(browser: Browser, tmp_path: Path) -> None:
    """The nightly merged report: 20,000 results (2,000+ non-pass listed) opens and filters to exactly the
    right rows with no script error. The times of one open and one filter are printed, not asserted (speed is
    measured, not a test verdict: a loaded CI machine must not fail it); they were 0.5-1.5 s on 2 cores."""
    recs = synthetic(20000)
    page = tmp_path / "report.html"
    write_html(page, recs, summarize(recs), known_path=None)
    opened = browser.open(page)  # includes starting the renderer process
    t0 = time.monotonic()
    browser.click("#cell-conv3d-paddle-cpu", corner=True)
    browser.js("new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")
    filtered = time.monotonic() - t0
    shown = browser.js(f"{VISIBLE}.length")
    assert shown == sum(r.status != "pass" and r.op == "conv3d" and r.backend == "paddle" for r in recs)
    assert not browser.errors()
    print(f"\n20,000 results ({page.stat().st_size / 1e6:.1f} MB, {shown} rows after filter): open {opened:.2f} s,"
          f" filter {filtered:.3f} s")
