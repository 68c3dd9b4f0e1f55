"""Which smoke items `make test` runs on the backends that build a model per case (issue 26).

Every backend that runs cases as given runs every smoke item. A backend whose cases each pay an
export, conversion or compile (`Backend.builds_per_case`) runs the shape cover (harness/model/cover.py:
every value of every feature that reaches a translation, at least once) and, for each known issue that
names smoke cases on it (on any host, for any output), the first of them in corpus order: every known
divergence keeps a witness
there, which fails if the divergence changes and shows as XPASS if it is fixed. Its other smoke items are
deselected, and run there in the nightly (`convdiff run`: every case on every backend). Under
`--compiled-smoke all`, or CONVDIFF_FULL_TESTS=1 (the nightly's test jobs), nothing is deselected.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.model.cover import cover, shape_features

FULL_TESTS_ENV = "CONVDIFF_FULL_TESTS"  # 1 in the nightly: every smoke item, and every chosen reproducer (tests/)
CHOICES = ("cover", "all")


def full_tests() -> bool:
    """Whether this is the nightly's run of the tests (CONVDIFF_FULL_TESTS set, and not to 0): everything runs."""
    return os.environ.get(FULL_TESTS_ENV, "") not in ("", "0")


def wanted(option: str, tier: str) -> bool:
    """Whether the cover applies: the smoke tier, `cover` asked for (the default), not the nightly."""
    return tier == "smoke" and option == "cover" and not full_tests()


def split(items: Sequence[Any], builds_per_case: Callable[[str], bool]) -> tuple[list[Any], list[Any]]:
    """(kept, deselected) among pytest items; case items carry `case`, `backend`, `known`, `forward_known`
    (the known-issue entries that may match them). The cover is drawn from the smoke cases among the items,
    and a known issue's witness is its first item, both in collection (corpus) order."""
    cases: dict[tuple[str, str], Any] = {}
    for item in items:
        case = getattr(item, "case", None)
        if case is not None:
            cases.setdefault((Path(case.file).name, case.id), case)
    chosen = {(Path(c.file).name, c.id) for c in cover(list(cases.values()), by=shape_features)}
    witnessed: set[tuple[str, str]] = set()  # (backend, known-issue id) with a witness kept
    kept: list[Any] = []
    dropped: list[Any] = []
    for item in items:
        case = getattr(item, "case", None)
        entries = {(item.backend, e.id) for e in (*item.known, *item.forward_known)} if case is not None else set()
        if (case is None or not builds_per_case(item.backend) or (Path(case.file).name, case.id) in chosen
                or entries - witnessed):
            kept.append(item)
            witnessed |= entries
        else:
            dropped.append(item)
    return kept, dropped


NOTE = ("convdiff: on the backends that build a model per case, the smoke tier's shape cover and a smoke case per "
        "known issue there run (harness/commands/smoke_select.py); their other smoke items run in the nightly, or "
        "with --compiled-smoke all")
