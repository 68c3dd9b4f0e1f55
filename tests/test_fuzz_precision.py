"""A new fuzz signature should mean a new bug: what is not one gets no signature.

- gradient records of an adapter with no gradient path are `unsupported`, whatever its forward did (a forward
  refusal copied onto them read as the framework refusing a backward pass it never had);
- a result whose known entry matches but does not list its status is an unlisted outcome of that entry;
- timeouts are one signature per target (the runner retries each once on a fresh worker first:
  tests/test_runner_faults.py);
- a campaign says how many of its new signatures reproduce in a quiet re-run.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.commands.cli import main
from harness.commands.fuzz.findings import Findings, signature
from harness.execution.records import Record
from harness.execution.runner import run_cases
from harness.judge.known_issues import KnownIssues, load_known_issues
from harness.judge.verdict import Verdicts

from .helpers import make_case


def rec(**kw) -> Record:
    base = {"case_id": "c", "file": "f.yaml", "op": "conv2d", "params": {"padding": 1, "dtype": "float32"},
            "backend": "b", "backend_version": "1", "device": "cpu", "dtype": "float32", "status": "mismatch"}
    return Record(**(base | kw))


def test_forward_failure_of_an_adapter_without_gradients_gives_unsupported_gradients() -> None:
    """`fault:exception` has no gradient path and its forward raises: its gradient records are `unsupported`
    (the adapter's capability), not the forward's error copied three times; torch's are judged."""
    case = make_case(id="g", op="conv2d", in_channels=2, out_channels=3, input_size=5, kernel_size=3, bias=True,
                     gradients=True)
    records: list[Record] = []
    run_cases([case], [("fault:exception", "cpu"), ("torch", "cpu")], records.append, Verdicts(KnownIssues([])))
    by = {(r.backend, r.output): r for r in records}
    assert by["fault:exception", "out"].status == "error"
    for g in ("grad_input", "grad_weight", "grad_bias"):
        assert by["fault:exception", g].status == "unsupported" and "no gradient path" in by["fault:exception", g].message
        assert by["torch", g].status == "pass"


def test_unlisted_outcome_is_grouped_under_its_entry_not_a_signature() -> None:
    f = Findings()
    f.add(rec(known_issue="some-entry", known_status=["mismatch"], status="rejected", message="refused"), 1.0)
    f.add(rec(known_issue="some-entry", known_status=["mismatch"], status="rejected", case_id="d"), 2.0)
    assert not f.new
    section = f.summary(["some-entry"])
    assert section["new_signatures"] == []
    assert section["unlisted_outcomes"][0] | {"first_s": 0} == {
        "id": "some-entry", "status": "rejected", "listed": ["mismatch"], "count": 2, "first_s": 0,
        "first_case": "c", "backend": "b", "output": "out"}


def test_unlisted_outcome_proposal_written_where_no_finding_was(tmp_path: Path) -> None:
    """A campaign whose only news is an unlisted outcome still writes its proposal (found/ did not exist yet)."""
    import argparse

    from harness.commands.fuzz.campaign import write_unlisted

    f = Findings()
    f.add(rec(known_issue="some-entry", known_status=["mismatch"], status="rejected", message="refused"), 1.0)
    write_unlisted(argparse.Namespace(write=None, out=str(tmp_path / "fuzz")), f)
    (stub,) = (tmp_path / "fuzz" / "found").iterdir()
    assert "# proposal: in some-entry, status: [mismatch, rejected]" in stub.read_text(encoding="utf-8")


def test_timeouts_are_one_signature_per_target() -> None:
    a = rec(status="timeout", op="conv2d", params={"padding": "same"})
    b = rec(status="timeout", op="conv_transpose3d", params={"padding": 2}, output="grad_input")
    assert signature(a) == signature(b)
    assert signature(a) != signature(rec(status="timeout", backend="other"))
    f = Findings()
    f.add(a, 1.0)
    f.add(b, 2.0)
    assert len(f.new) == 1 and next(iter(f.new.values())).count == 2


def test_campaign_reports_its_precision(tmp_path: Path) -> None:
    """A mutant's findings reproduce on a fresh worker: the precision section counts them as surviving."""
    out = tmp_path / "fuzz"
    status = main(["fuzz", "--backends", "mutant:flip_kernel", "--cases", "6", "--seed", "3", "--out", str(out),
                   "--minimize-budget", "10"])
    assert status == 1
    p = json.loads((out / "summary.json").read_text())["fuzz"]["precision"]
    assert p["new_signatures"] >= 1 and p["survived_quiet_rerun"] == p["new_signatures"] and p["did_not_reproduce"] == []
    assert p["unlisted_outcomes"] == 0 and p["timeouts_passed_on_retry"] == 0


def test_project_database_loads_with_unlisted_grouping() -> None:
    """The grouping keys on the record's known_issue: the project's database gives every entry an id and status."""
    entries = load_known_issues(Path(__file__).resolve().parents[1] / "cases" / "known_issues.yaml").entries
    assert entries and all(e.id and e.status for e in entries)
