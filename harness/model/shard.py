"""`--shard i/n`: a deterministic, cost-balanced partition of the expanded cases.

A case's cost is what it cost in a recorded run where the committed table has it (cases/shard_costs.json:
seconds of worker time over every target, its forward, gradient and relation results, with each batched
build's time spread over the cases it built, keyed `file name::case id` as records name them;
bench/shard_costs.py writes it from a nightly run's shards).
A case the table has not seen (a new case, another corpus) costs an estimate: a fixed part (the per-case
call and, for compilers, a build) plus the multiply-adds of the convolution, in seconds by the table's
`fixed_s` + `per_mac_s` x multiply-adds, the line the table's recorded cases fit (least squares, neither term
negative: a nightly's cost per case is mostly fixed, the builds and calls of every target, and the arithmetic
adds to it on the model-sized layers), or, in a table without that fit, `estimate_scale` (the recorded seconds
of its cases over their estimates). Cases are dealt largest first
to the currently lightest shard (LPT), ties broken by file and id, so every machine computes the same
partition and the shards' union is the full run.
"""

from __future__ import annotations

import functools
import heapq
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.model.case import Case

FIXED_COST = 2e5  # multiply-adds one case costs beyond its arithmetic (dispatch, compile)
COSTS = Path(__file__).resolve().parents[2] / "cases" / "shard_costs.json"


def parse_shard(text: str) -> tuple[int, int]:
    """'2/3' -> (2, 3); raises ValueError with a user-facing message."""
    try:
        i, n = (int(p) for p in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like i/n (e.g. 2/3), got '{text}'") from None
    if not 1 <= i <= n:
        raise ValueError(f"--shard i/n needs 1 <= i <= n, got '{text}'")
    return i, n


def case_macs(case: Case) -> int:
    """The convolution's multiply-adds: every output element times the terms summed into it (0 without geometry)."""
    if case.geometry is None:
        return 0
    return case.batch * case.out_channels * math.prod(case.geometry.out_size) * case.accumulation_length


def estimate(case: Case) -> float:
    """The model's cost of a case, in multiply-adds (the fallback where nothing was recorded)."""
    return FIXED_COST + case_macs(case)


def case_key(case: Case, corpus: Path = COSTS.parent) -> str | None:
    """The table's key of a case: its file's name, '::', its id, as its records name it (the corpus' file names
    are unique); None for a case outside the corpus directory, which the table cannot have seen."""
    path = Path(case.file).resolve()
    return f"{path.name}::{case.id}" if path.is_relative_to(corpus.resolve()) else None


@functools.cache
def load_costs(path: Path = COSTS) -> dict[str, Any]:
    """The committed cost table ({"seconds": {key: s}, "fixed_s": s, "per_mac_s": s, ...}); {} without one."""
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) and isinstance(table.get("seconds"), dict) else {}


def case_cost(case: Case, table: dict[str, Any] | None = None, corpus: Path = COSTS.parent) -> float:
    """A case's cost in seconds: recorded where `table` (default: the committed one) has it, else estimated."""
    table = load_costs() if table is None else table
    key = case_key(case, corpus)
    recorded = table.get("seconds", {}).get(key) if key is not None else None
    if recorded is not None:
        return float(recorded)
    if "fixed_s" in table:
        return float(table["fixed_s"]) + float(table.get("per_mac_s", 0.0)) * case_macs(case)
    return estimate(case) * float(table.get("estimate_scale", 1.0))


def fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(fixed_s, per_mac_s): the least-squares line through (multiply-adds, seconds) with neither term negative
    (a negative slope becomes a flat mean, a negative intercept a line through the origin); (0, 0) for no points."""
    if not points:
        return 0.0, 0.0
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx > 0 else 0.0
    if slope <= 0:
        return my, 0.0
    fixed = my - slope * mx
    if fixed < 0:
        xx = sum(x * x for x, _ in points)
        return 0.0, sum(x * y for x, y in points) / xx
    return fixed, slope


def shard(cases: Sequence[Case], index: int, count: int, table: dict[str, Any] | None = None,
          corpus: Path = COSTS.parent) -> list[Case]:
    """The cases of shard `index` (1-based) of `count`, in their original order."""
    if count == 1:
        return list(cases)
    cost = [case_cost(c, table, corpus) for c in cases]
    order = sorted(range(len(cases)), key=lambda k: (-cost[k], cases[k].file, cases[k].id))
    heap = [(0.0, s) for s in range(count)]
    owner = [0] * len(cases)
    for k in order:
        load, s = heapq.heappop(heap)
        owner[k] = s
        heapq.heappush(heap, (load + cost[k], s))
    return [c for k, c in enumerate(cases) if owner[k] == index - 1]
