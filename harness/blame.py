"""Who is wrong when backends disagree: the oracle settles it, the majority corroborates.

For every case where some backend's values or shape differ from the oracle, list the
backends that agree with the oracle and those that do not. When the oracle and a
majority of the backends that ran the case agree against a single backend, that one
is named the likely culprit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .records import Record

DISAGREE = ("mismatch", "shape_mismatch")


def blame(records: Iterable[Record]) -> list[dict[str, Any]]:
    cases: dict[tuple[str, str, str], list[Record]] = defaultdict(list)
    for r in records:
        if not r.backend.startswith(("fault:", "mutant:")):
            cases[(r.file, r.case_id, r.device)].append(r)
    out = []
    for (file, case_id, device), recs in sorted(cases.items()):
        bad = [r for r in recs if r.status in DISAGREE]
        if not bad:
            continue
        good = [r for r in recs if r.status == "pass"]
        culprit = bad[0].backend if len(bad) == 1 and len(good) >= 2 and len(good) > len(bad) else None
        out.append({
            "file": file, "case_id": case_id, "device": device,
            "agree_with_oracle": sorted(r.backend for r in good),
            "disagree": sorted(r.backend for r in bad),
            "closest_disagreeing": min(bad, key=lambda r: r.bound_ratio if r.bound_ratio is not None else float("inf")).backend,
            "likely_culprit": culprit,
        })
    return out
