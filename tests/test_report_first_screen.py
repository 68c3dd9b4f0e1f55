"""The report's first screen in headless Chromium: the unexpected results with their diagnosis (or first message
line, and whose an error is), narrowed by the filters; for a run on one or two targets (a new backend beside a
reference), that run's findings lead and the op x target table follows them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.judge.summary import summarize
from reports.html import write_html
from tests.report_records import varied
from tests.test_report_browser import Browser, label, needs_chromium

ITEMS = "Array.from(document.querySelectorAll('#unexpected li')).map(li => li.innerText)"


def two_targets() -> list:
    """varied()'s torch and paddle results: an unexpected wrong value with a diagnosis, a crash, an adapter's
    error, known ones; passes."""
    out = []
    for r in varied():
        if r.backend not in ("torch", "paddle"):
            continue
        if r.status == "mismatch" and r.backend == "torch":
            r = dataclasses.replace(r, diagnosis="flip_kernel")
        if r.status == "error":
            r = dataclasses.replace(r, error_origin="adapter",
                                    message="AttributeError: x (raised in the adapter's code, at myrt.py:31, in run)")
        out.append(r)
    return out


@pytest.fixture
def browser():
    b = Browser()
    yield b
    b.close()


@needs_chromium
def test_one_or_two_targets_lead_with_their_findings(browser: Browser, tmp_path: Path) -> None:
    recs = two_targets()
    page = tmp_path / "report.html"
    write_html(page, recs, summarize(recs), known_path=None)
    browser.open(page)
    top = browser.js("""(() => { const y = s => document.querySelector(s).getBoundingClientRect().top;
        return {findings: y('#findings'), matrix: y('#matrix'), first: document.querySelector('details.grp')
        .getBoundingClientRect().bottom, height: innerHeight}; })()""")
    assert top["findings"] < top["matrix"] and top["first"] <= top["height"]  # a finding on the first screen
    assert browser.js("document.querySelector('#findings').textContent").startswith(
        "Findings on paddle-cpu and torch-cpu")
    items = browser.js(ITEMS)
    mismatch = next(i for i in items if i.startswith(label(next(r for r in recs if r.diagnosis))))
    assert "1.7 x bound · diagnosis flip_kernel" in mismatch
    error = next(i for i in items if "error" in i)
    assert "error (adapter)" in error and "at myrt.py:31, in run" in error
    assert not browser.errors(), browser.errors()


@needs_chromium
def test_the_unexpected_list_honours_the_filters(browser: Browser, tmp_path: Path) -> None:
    recs = varied()
    page = tmp_path / "report.html"
    write_html(page, recs, summarize(recs), known_path=None)
    unexpected = [r for r in recs if r.unexpected]
    browser.open(page, "b=torch")
    assert browser.js("document.querySelector('#matrix').getBoundingClientRect().top < "  # four targets: the table
                      "document.querySelector('#findings').getBoundingClientRect().top")   # comes first, as before
    torch = [label(r) for r in unexpected if r.backend == "torch"]
    assert sorted(i.split(" ")[0] for i in browser.js(ITEMS)) == sorted(torch)
    assert browser.js("document.querySelector('#unexp-n').textContent") == \
        f"{len(torch)} of {len(unexpected)} unexpected result(s) in this view"
    browser.js("const s = document.querySelector('#f-b'); s.value = ''; s.dispatchEvent(new Event('change'))")
    assert sorted(i.split(" ")[0] for i in browser.js(ITEMS)) == sorted(label(r) for r in unexpected)
    assert browser.js("document.querySelector('#unexp-n').textContent") == f"{len(unexpected)} unexpected result(s)"
    browser.js("location.hash = '#s=crashes'")
    browser.settle()
    assert [i.split(" ")[0] for i in browser.js(ITEMS)] == [label(r) for r in unexpected if r.status == "crash"]
    assert not browser.errors(), browser.errors()
