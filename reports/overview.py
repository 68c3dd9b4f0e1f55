"""The report's headline: what a reader must see on the first screen, before any environment detail.

Results are counted by class, each split into known (a known-issues entry explains it) and unexpected:
- wrong values: mismatch, shape_mismatch, accepted_invalid (the framework returned a result, and it is wrong);
- crashes and timeouts;
- refusals: rejected (a valid case refused); errors (the adapter failed) apart;
- unsupported and pass, as plain counts.
Broken targets (installed, unable to run) and backends named in --backends that gave no result fail the
run as unexpected results do, so they stand in the headline too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.execution.records import Record

CLASSES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # key, what the page calls it, its statuses; the findings list follows this order
    ("wrong", "wrong values", ("mismatch", "shape_mismatch", "accepted_invalid")),
    ("crash", "crashes and timeouts", ("crash", "timeout")),
    ("refusal", "refusals", ("rejected", "error")),
    ("unsupported", "unsupported", ("unsupported",)),
)
CLASS_OF = {s: i for i, (_, _, statuses) in enumerate(CLASSES) for s in statuses}
UNEXPECTED_NAMED = 20  # unexpected results named one by one on the first screen; the rest by a filter link


@dataclass
class Tally:
    """Results of some statuses: how many, how many a known issue explains, per status."""

    statuses: tuple[str, ...]
    total: int = 0
    unexpected: int = 0
    by_status: dict[str, int] = field(default_factory=dict)

    @property
    def known(self) -> int:
        return self.total - self.unexpected

    def add(self, rec: Record) -> None:
        self.total += 1
        self.unexpected += rec.unexpected
        self.by_status[rec.status] = self.by_status.get(rec.status, 0) + 1


@dataclass
class Overview:
    results: int
    passes: int
    wrong: Tally
    crashes: Tally
    refusals: Tally      # rejected only
    errors: Tally
    unsupported: int
    unexpected_total: int
    broken: dict[str, str]
    missing: dict[str, str]
    fixed_upstream: int = 0  # known issues whose results now pass

    @property
    def failed(self) -> bool:
        """The run's verdict, as `convdiff run` exits (harness.judge.summary.exit_status)."""
        return bool(self.unexpected_total or self.broken or self.missing)


def overview(records: Sequence[Record], summary: dict[str, Any]) -> Overview:
    tallies = {k: Tally(s) for k, s in (("wrong", CLASSES[0][2]), ("crash", CLASSES[1][2]),
                                       ("rejected", ("rejected",)), ("error", ("error",)))}
    which = {s: k for k, t in tallies.items() for s in t.statuses}
    passes = unsupported = unexpected = fixed = 0
    for r in records:
        unexpected += r.unexpected
        fixed += r.fixed_upstream
        if r.status in ("pass", "within_bound"):
            passes += 1
        elif r.status == "unsupported":
            unsupported += 1
        else:
            tallies[which[r.status]].add(r)
    return Overview(len(records), passes, tallies["wrong"], tallies["crash"], tallies["rejected"], tallies["error"],
                    unsupported, unexpected, dict(summary.get("broken_targets") or {}),
                    dict(summary.get("missing_targets") or {}), fixed)
