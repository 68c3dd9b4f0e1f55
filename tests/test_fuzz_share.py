"""bench/fuzz_share.py's reason for each missed entry, on hand-made cases and records (no framework runs)."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.execution.records import Record
from harness.judge.known_issues import load_known_issues
from harness.model.loader import load_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import fuzz_share  # bench/ is not a package: on the path above

CASES = """\
cases:
  - {id: wide, op: conv2d, in_channels: 2, out_channels: 3, input_size: 5, kernel_size: 3}
  - {id: narrow, op: conv1d, in_channels: 1, out_channels: 1, input_size: 4, kernel_size: 2}
"""
KNOWN = """\
issues:
  - {id: first, backend: torch, cases: {op: conv2d}, status: mismatch, reason: listed first, link: none}
  - {id: conv3d-only, backend: torch, cases: {op: conv3d}, status: mismatch, reason: no such case drawn, link: none}
  - {id: slow-one, backend: iree, cases: {op: conv1d}, status: mismatch, reason: iree ran nothing, link: none}
  - {id: data-dependent, backend: torch, cases: {op: conv1d}, status: [mismatch, pass], reason: passes here, link: none}
  - {id: second, backend: torch, cases: {op: conv2d, in_channels: 2}, status: mismatch, reason: behind first, link: none}
  - {id: refused, backend: tvm, cases: {op: conv1d}, status: mismatch, reason: tvm refuses, link: none}
  - {id: other-status, backend: tvm, cases: {op: conv2d}, status: mismatch, reason: tvm crashes, link: none}
"""


def rec(case: str, backend: str, status: str, known: str | None = None) -> Record:
    return Record(case, "f.yaml", "conv2d", {}, backend, "1", "cpu", "float32", status, known_issue=known,
                  known_status=["mismatch"] if known else [])


def test_each_missed_entry_gets_the_first_reason_that_holds(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CASES)
    (tmp_path / "k.yaml").write_text(KNOWN)
    cases = load_file(tmp_path / "c.yaml")
    entries = {e.id: e for e in load_known_issues(tmp_path / "k.yaml").entries}
    records = [rec("wide", "torch", "mismatch", "first"), rec("narrow", "torch", "pass"),
               rec("narrow", "tvm", "unsupported"), rec("wide", "tvm", "crash")]
    targets = {"torch-cpu": {}, "iree-cpu": {}, "tvm-cpu": {}}
    why = fuzz_share.why_missed([e for i, e in entries.items() if i != "first"], targets, cases, records)
    assert {i: w["reason"] for i, w in why.items()} == {
        "conv3d-only": "not drawn", "slow-one": "not run", "data-dependent": "passed",
        "second": "explained by another entry", "refused": "unsupported", "other-status": "other status"}
    assert why["second"]["shadowed_by"] == {"first": 1} and why["second"]["drawn_inside"] == 1
    assert why["slow-one"] == {"reason": "not run", "drawn_inside": 1, "results_inside": {}, "shadowed_by": {}}


def test_reach_needs_a_case_inside_run_by_a_target_the_entry_names(tmp_path: Path) -> None:
    """bench/fuzz_reach.py: an entry is reached when a target it names ran a case inside it; the pace gives a
    target costing 5 s a case a small share of the seed's cases and one costing 1 ms every one."""
    import fuzz_reach

    (tmp_path / "c.yaml").write_text(CASES)
    (tmp_path / "k.yaml").write_text(KNOWN)
    wide, narrow = load_file(tmp_path / "c.yaml")
    entries = load_known_issues(tmp_path / "k.yaml").entries
    targets = {"torch-cpu": {}, "iree-cpu": {}, "tvm-cpu": {}}
    got = fuzz_reach.reached(entries, targets, {"torch": [wide, narrow], "iree": [], "tvm": [narrow]})
    assert got == {"first", "data-dependent", "second", "refused"}
    ran = fuzz_reach.ran_cases(7, 60, {"torch": 0.001, "eager": 0.002, "iree": 5.0}, slow={"iree"})
    valid = sum(cfg.case is not None for cfg, _ in zip(fuzz_reach.generate(7, fuzz_reach.INVALID_RATE,
                                                                            fuzz_reach.GRADIENT_SHARE), range(60)))
    assert len(ran["torch"]) == len(ran["eager"]) == valid
    assert 0 < len(ran["iree"]) < valid / 4
