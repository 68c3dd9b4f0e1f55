"""A known issue whose result now passes is named, with its case and target, on the console and in JUnit."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.commands.cli import main

CASES = "cases:\n  - {id: a, op: conv2d, in_channels: 2, out_channels: 3, input_size: 5, kernel_size: 3}\n"
KNOWN = """\
issues:
  - id: ours-claims-a-mismatch
    backend: torch
    cases: {case: a}
    status: mismatch
    reason: a divergence torch does not have (so its result passes)
    link: https://example.org/ours/1
"""


def test_each_known_issue_that_now_passes_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "few.yaml").write_text(CASES)
    (tmp_path / "ours.yaml").write_text(KNOWN)
    out = tmp_path / "o"
    rc = main(["run", str(tmp_path / "few.yaml"), "--backends", "torch", "--known-issues", str(tmp_path / "ours.yaml"),
               "--out", str(out)])
    printed = capsys.readouterr().out
    assert rc == 0, printed  # a pass is not a failure
    assert "1 known issue(s) now pass (fixed upstream?)" in printed
    assert "known issue(s) that now pass, fixed upstream? (1):\n  ours-claims-a-mismatch  few.yaml::a  torch-cpu" in printed
    tc = ET.parse(out / "junit.xml").getroot().find(".//testcase[@name='a']")
    assert tc is not None and tc.find("failure") is None and tc.find("skipped") is None
    prop = tc.find("properties/property[@name='fixed_upstream']")
    assert prop is not None and prop.get("value") == "ours-claims-a-mismatch"
    text = tc.findtext("system-out") or ""
    assert "ours-claims-a-mismatch now passes" in text and "few.yaml::a on torch-cpu" in text
    assert "https://example.org/ours/1" in text


def test_an_entry_listing_pass_accepts_a_relation_within_the_bound() -> None:
    """`pass` among an entry's statuses accepts a relation record that holds within the bound (not bitwise): an
    intermittent defect's relation runs are no "fixed upstream?" hint; an entry that lists failures only still
    gives it."""
    from harness.execution.records import Record

    def rec(status: str, listed: list[str]) -> Record:
        return Record("c", "f.yaml", "conv2d", {}, "tensorflow", "2.21.0", "cpu", "float32", status,
                      output="relation:adjoint", known_issue="flaky", known_status=listed)

    assert not rec("within_bound", ["crash", "pass"]).fixed_upstream
    assert not rec("pass", ["crash", "pass"]).fixed_upstream
    assert rec("within_bound", ["crash"]).fixed_upstream and rec("pass", ["crash"]).fixed_upstream
    assert not rec("within_bound", ["within_bound"]).fixed_upstream
