"""`--shard i/n`: a deterministic, cost-balanced partition of the expanded cases.

Cost is a rough model of one case on every backend: a fixed part (per-case call and,
for compilers, a build) plus the multiply-adds of the convolution. Cases are dealt
largest first to the currently lightest shard (LPT), ties broken by file and id, so
every machine computes the same partition and the shards' union is the full run.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

from harness.model.case import Case

FIXED_COST = 2e5  # multiply-adds one case costs beyond its arithmetic (dispatch, compile)


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


def case_cost(case: Case) -> float:
    return FIXED_COST + case_macs(case)


def shard(cases: Sequence[Case], index: int, count: int) -> list[Case]:
    """The cases of shard `index` (1-based) of `count`, in their original order."""
    if count == 1:
        return list(cases)
    order = sorted(range(len(cases)), key=lambda k: (-case_cost(cases[k]), cases[k].file, cases[k].id))
    heap = [(0.0, s) for s in range(count)]
    owner = [0] * len(cases)
    for k in order:
        load, s = heapq.heappop(heap)
        owner[k] = s
        heapq.heappush(heap, (load + case_cost(cases[k]), s))
    return [c for k, c in enumerate(cases) if owner[k] == index - 1]
