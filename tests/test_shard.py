"""Shards partition the corpus exactly, deterministically, with balanced cost."""

from __future__ import annotations

import pytest

from harness.model.loader import load_cases
from harness.model.shard import case_cost, parse_shard, shard


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_union_of_shards_is_the_full_run(n):
    cases = load_cases(["cases"])
    parts = [shard(cases, i, n) for i in range(1, n + 1)]
    keys = [(c.file, c.id) for p in parts for c in p]
    assert sorted(keys) == sorted((c.file, c.id) for c in cases)
    assert len(keys) == len(set(keys))
    assert parts == [shard(cases, i, n) for i in range(1, n + 1)]  # deterministic
    if n > 1:
        loads = [sum(case_cost(c) for c in p) for p in parts]
        assert max(loads) <= 1.2 * min(loads)


@pytest.mark.parametrize("text", ["0/3", "4/3", "a/b", "3"])
def test_bad_shard_spec(text):
    with pytest.raises(ValueError):
        parse_shard(text)
