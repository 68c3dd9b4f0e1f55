"""Shared helpers for the harness's own tests."""

from __future__ import annotations

from collections.abc import Sequence

from harness.build import make_case
from harness.case import Case
from harness.records import Record
from harness.runner import run_cases

__all__ = ["make_case", "run_on"]


def run_on(cases: Sequence[Case], backends: Sequence[str], device: str = "cpu", timeout: float = 120.0) -> list[Record]:
    """Run cases through the real isolated workers; frameworks never load in the test process."""
    records: list[Record] = []
    info = run_cases(cases, [(b, device) for b in backends], records.append, timeout=timeout)
    if info.skipped:
        import pytest

        pytest.skip("; ".join(f"{t}: {r}" for t, r in info.skipped.items()))
    return records
