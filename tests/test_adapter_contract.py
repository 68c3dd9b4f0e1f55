"""The adapter contract holds for every case: an `expect: invalid` case has no geometry (backends/base.py,
docs/guide/adapters.md), and the guide's example adapter, which hands such a case to ONNX as stated, records
a verdict on each of them, never an `error` of its own.

The same over the whole corpus runs in the nightly only (CONVDIFF_FULL_TESTS=1): 1,356 results through ONNX's
pure-Python reference evaluator, 49 s on a shared 2-core AMD EPYC (Zen 4) on 2026-11-29, beyond make test's
budget; the invalid cases alone take about a second."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.registry import installed_backends
from harness.model.loader import load_cases

from .helpers import run_on

ROOT = Path(__file__).resolve().parents[1]


def invalid_cases():
    return [c for c in load_cases([str(ROOT / "cases")]) if c.expect == "invalid"]


def test_every_invalid_case_of_the_corpus_has_no_geometry() -> None:
    cases = invalid_cases()
    assert cases and all(c.geometry is None for c in cases)


def test_the_guides_example_adapter_runs_every_invalid_case_without_an_error() -> None:
    if "onnx-reference" not in installed_backends():  # examples/convdiff-onnx-reference, installed by make setup
        pytest.skip("examples/convdiff-onnx-reference (onnx-reference) is not installed with its onnx")
    records = run_on(invalid_cases(), ["onnx-reference"])
    assert records and not [(r.case_id, r.message) for r in records if r.status == "error"]


@pytest.mark.nightly("1,356 results through ONNX's reference evaluator: see the module docstring")
def test_the_guides_example_adapter_runs_the_whole_corpus_without_an_error() -> None:
    if "onnx-reference" not in installed_backends():
        pytest.skip("examples/convdiff-onnx-reference (onnx-reference) is not installed with its onnx")
    files = [str(p) for p in sorted((ROOT / "cases").glob("*.yaml")) if p.name != "known_issues.yaml"]
    records = run_on(load_cases(files), ["onnx-reference"])
    assert records and not [(r.file, r.case_id, r.message) for r in records if r.status == "error"]
