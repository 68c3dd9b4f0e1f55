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


def test_compiled_sample_runs_smoke_and_one_shard_on_building_backends_only():
    from backends.registry import get_backend
    from harness.commands.cli import compiled_sample

    cases = load_cases(["cases"])
    assert compiled_sample(cases, ["torch", "tvm"], 1) == (None, [])
    assert compiled_sample(cases, ["torch", "paddle"], 4) == (None, [])  # nothing builds per case
    select, sampled = compiled_sample(cases, ["torch", "tvm", "torch-inductor"], 4)
    assert sampled == ["torch-inductor", "tvm"] and not get_backend("torch").builds_per_case
    assert all(select("torch", c) for c in cases)
    chosen = [c for c in cases if select("tvm", c)]
    rest = [c for c in cases if c.tier != "smoke"]
    assert {(c.file, c.id) for c in chosen} == ({(c.file, c.id) for c in cases if c.tier == "smoke"}
                                                | {(c.file, c.id) for c in shard(rest, 1, 4)})
    assert len(rest) / 4 - 2 <= len(chosen) - (len(cases) - len(rest)) <= len(rest) / 4 + 2
    assert [c for c in cases if select("torch-inductor", c)] == chosen


def test_run_with_compiled_sample_writes_records_for_the_chosen_cases_only(tmp_path):
    import json

    from backends.registry import get_backend
    from harness.commands.cli import main

    for name in ("torch", "tvm"):
        if get_backend(name).unavailable_reason():
            pytest.skip(get_backend(name).unavailable_reason())
    f = tmp_path / "c.yaml"
    f.write_text("defaults: {op: conv2d, in_channels: 2, out_channels: 2, input_size: 5, kernel_size: 3}\n"
                 "cases:\n  - {id: s, tier: smoke}\n  - {id: a}\n  - {id: b, stride: 2}\n  - {id: c, padding: 1}\n"
                 "  - {id: d, dilation: 2}\n")
    main(["run", str(f), "--backends", "torch,tvm", "--compiled-sample", "2", "--out", str(tmp_path / "o")])
    recs = [json.loads(ln) for ln in (tmp_path / "o" / "results.jsonl").read_text().splitlines()]
    by = {b: sorted(r["case_id"] for r in recs if r["backend"] == b) for b in ("torch", "tvm")}
    assert by["torch"] == ["a", "b", "c", "d", "s"]
    assert "s" in by["tvm"] and len(by["tvm"]) == 3  # the smoke case and 2 of the other 4
    assert all(r["status"] == "pass" for r in recs)
