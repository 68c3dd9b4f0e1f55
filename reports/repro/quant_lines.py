"""The staleness check of the quantized reproducers: a record's translation still says what the adapter does.

The quantized adapters record descriptive lines (a user's spelling of each step), not code that runs,
so a template rebuilds the lines its adapter would record for the case and checks each is there.
"""

from __future__ import annotations

from harness.execution.records import Record
from reports.repro.registry import stale


def require_in(rec: Record, lines: list[str]) -> None:
    """Each of `lines` is a line of the record's translation (when it has one: a rejected result has none)."""
    have = set(rec.translation.splitlines())
    if rec.translation.strip() and any(ln not in have for ln in lines):
        raise stale(rec)
