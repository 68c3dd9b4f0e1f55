"""Shards partition the corpus exactly, deterministically, with balanced cost."""

from __future__ import annotations

from pathlib import Path

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


def test_compiled_sample_runs_a_fixed_share_on_building_backends_only():
    from backends.registry import get_backend
    from harness.commands.selection import compiled_sample

    cases = load_cases(["cases"])
    assert compiled_sample(cases, ["torch", "tvm"], 1) == (None, [])
    assert compiled_sample(cases, ["torch", "paddle"], 4) == (None, [])  # nothing builds per case
    select, sampled = compiled_sample(cases, ["torch", "tvm", "torch-inductor"], 4)
    assert sampled == ["torch-inductor", "tvm"] and not get_backend("torch").builds_per_case
    assert all(select("torch", c) for c in cases)
    chosen = [c for c in cases if select("tvm", c)]
    rest = [c for c in cases if c.tier != "smoke"]
    assert 0.2 <= len(chosen) / len(cases) <= 0.3  # about 1/4 of the cases
    big = {f for f in {c.file for c in rest} if sum(c.file == f for c in rest) >= 20}
    assert big and big <= {c.file for c in chosen}  # spread over the files, not drawn from a few
    assert [c for c in cases if select("torch-inductor", c)] == chosen
    fewer = compiled_sample(cases[: len(cases) // 2], ["tvm"], 4)[0]  # a case's membership is its own
    assert [c for c in cases[: len(cases) // 2] if fewer("tvm", c)] == [c for c in chosen if c in cases[: len(cases) // 2]]


def test_compiled_sample_leaves_the_largest_convolutions_to_the_full_run():
    """A case above SAMPLE_MAX_MACS is never in a sample, whatever its hash; at or below, its hash decides."""
    import zlib

    from harness.commands.selection import SAMPLE_MAX_MACS, compiled_sample, in_sample
    from harness.model.loader import load_file
    from harness.model.shard import case_macs

    # deeplabv3's dilated 3x3: 256 outputs x 16 x 16 positions, each summing 2048 x 3 x 3 terms
    (giant,) = [c for c in load_file("cases/models/deeplabv3_resnet50.yaml") if c.id == "deeplabv3_resnet50_26_conv2d_k3d24"]
    assert case_macs(giant) == 256 * 16 * 16 * 2048 * 9 > SAMPLE_MAX_MACS
    assert zlib.crc32(f"deeplabv3_resnet50.yaml::{giant.id}".encode()) % 16 == 0  # its hash alone would pick it
    assert not in_sample(giant, 16)
    select, _ = compiled_sample([giant], ["torch", "tvm"], 16)
    assert select is not None and select("torch", giant) and not select("tvm", giant)
    assert compiled_sample([giant], ["tvm"], 1) == (None, [])  # SAMPLE=1: every case, the giant included
    small = [c for c in load_cases(["cases"]) if case_macs(c) <= SAMPLE_MAX_MACS]
    assert all(in_sample(c, 16) == (zlib.crc32(f"{Path(c.file).name}::{c.id}".encode()) % 16 == 0) for c in small)


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
    from harness.commands.selection import in_sample
    from harness.model.loader import load_file

    assert by["tvm"] == sorted(c.id for c in load_file(f) if in_sample(c, 2))
    assert all(r["status"] == "pass" for r in recs)
    # TVM builds its cases in batches before running them (Backend.prepare): a cost no record carries, which
    # summary.json keeps per target for the --shard cost table (bench/shard_costs.py); torch builds nothing
    builds = json.loads((tmp_path / "o" / "summary.json").read_text()).get("builds", {})
    assert set(builds) == {"tvm-cpu"} and builds["tvm-cpu"]["seconds"] >= 0


def test_recorded_costs_decide_the_partition_and_the_estimate_fills_in(tmp_path):
    """A table's seconds place the cases it recorded; a case it has not seen costs the estimate in the table's
    seconds (estimate_scale); a case file outside the corpus directory is never looked up."""
    from harness.model.shard import case_key, estimate

    f = tmp_path / "c.yaml"
    f.write_text("defaults: {op: conv2d, in_channels: 2, out_channels: 2, input_size: 5, kernel_size: 3}\n"
                 "cases:\n  - {id: a}\n  - {id: b}\n  - {id: c}\n  - {id: d}\n  - {id: big, input_size: 40}\n")
    cases = load_cases([str(f)])
    by_id = {c.id: c for c in cases}
    assert case_key(by_id["a"], tmp_path) == "c.yaml::a" and case_key(by_id["a"]) is None  # not in cases/
    # recorded: d (the smallest estimate) cost ten times a, b or c; big (the largest estimate) is unseen
    table = {"seconds": {"c.yaml::a": 10.0, "c.yaml::b": 10.0, "c.yaml::c": 10.0, "c.yaml::d": 100.0},
             "estimate_scale": 1e-4}
    assert case_cost(by_id["a"], table, tmp_path) == 10.0
    assert case_cost(by_id["big"], table, tmp_path) == pytest.approx(estimate(by_id["big"]) * 1e-4)
    assert 10 < case_cost(by_id["big"], table, tmp_path) < 100

    def parts(table: dict) -> set[frozenset[str]]:
        return {frozenset(c.id for c in shard(cases, i, 3, table, tmp_path)) for i in (1, 2, 3)}

    assert parts(table) == {frozenset({"d"}), frozenset({"big"}), frozenset({"a", "b", "c"})}
    assert frozenset({"d"}) not in parts({})  # by the estimate alone d is small, and shares a shard
    # with the fitted line, an unseen case costs its fixed part plus its multiply-adds at the fitted rate
    from harness.model.shard import case_macs
    lined = {**table, "fixed_s": 50.0, "per_mac_s": 1e-3}
    assert case_cost(by_id["big"], lined, tmp_path) == pytest.approx(50.0 + 1e-3 * case_macs(by_id["big"]))
    assert case_cost(by_id["a"], lined, tmp_path) == 10.0  # a recorded case keeps its seconds


def test_fit_line_keeps_both_terms_non_negative():
    """The unseen cases' line, by hand: exact points give their line back; a falling cloud gives its mean, flat;
    a line whose intercept would be negative goes through the origin."""
    from harness.model.shard import fit_line

    assert fit_line([(0, 2.0), (10, 12.0), (20, 22.0)]) == pytest.approx((2.0, 1.0))
    assert fit_line([(0, 9.0), (10, 3.0)]) == pytest.approx((6.0, 0.0))
    fixed, slope = fit_line([(1, 0.0), (2, 10.0)])  # least squares: intercept -10, so through the origin
    assert fixed == 0.0 and slope == pytest.approx((1 * 0 + 2 * 10) / (1 + 4))
    assert fit_line([]) == (0.0, 0.0)
