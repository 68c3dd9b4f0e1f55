"""Shared by the epilogue reproducer tests (test_repro_epilogue*.py, test_repro_deployed.py): one harness run
of chosen corpus cases, then every script in its own interpreter against the record it reproduces."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.execution.records import Record
from reports.repro.script import ReproUnavailable, script_for
from tests.helpers import assert_script_verdict, run_on, run_scripts, script_sample

ROOT = Path(__file__).resolve().parent.parent
JUDGED = ("pass", "mismatch", "shape_mismatch", "rejected")  # the statuses a script reaches on its own


def records_for(chosen: Sequence[tuple[str, str]], backends: Sequence[str]) -> list[Record]:
    """The chosen (file, case id) corpus cases on `backends`, from one harness run (known issues matched
    with each worker's live host facts)."""
    from harness.model.loader import load_cases

    files = sorted({f for f, _ in chosen})
    cases = [c for c in load_cases([str(ROOT / "cases" / f) for f in files]) if (Path(c.file).name, c.id) in chosen]
    assert len(cases) == len(chosen), "a chosen case is missing from the corpus"
    return run_on(cases, backends, timeout=300, known=True)


def assert_scripts_reach_the_records(records: Sequence[Record], tmp_path: Path, backends: Sequence[str]) -> None:
    """Every judged record's script, run alone, reaches its verdict, error and error/bound; an unsupported
    record gets no script. The verdicts are the records': nothing here depends on the host."""
    judged = [r for r in records if r.status in JUDGED]
    assert {r.backend for r in judged} == set(backends)  # each backend has at least one script run
    for rec in records:
        if rec.status == "unsupported":
            with pytest.raises(ReproUnavailable, match="unsupported"):
                script_for(rec)
    judged = script_sample(judged)
    scripts = [script_for(r) for r in judged]
    for rec, script in zip(judged, scripts):
        assert "def run_framework" in script and ("EPILOGUE = " in script) == bool(rec.params.get("epilogue"))
    for rec, (rc, out) in zip(judged, run_scripts(judged, scripts, tmp_path)):
        where = f"{rec.case_id} on {rec.backend}: harness {rec.status} ({rec.message}); script:\n{out}"
        if rec.status == "mismatch" and rec.bound_ratio is None:  # non-finite output: no finite ratio to compare
            assert re.findall(r"^verdict: (\w+)$", out, re.M) == ["mismatch"] and rc == 1, where
            assert re.search(r"^[1-9]\d* non-finite", out, re.M), where
            continue
        assert_script_verdict(rec, rc, out, where)
