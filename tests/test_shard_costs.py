"""bench/shard_costs.py: a case's cost from a shard's records, and a cold shard's costs converted to a warm night's
by the warm/cold ratios of shards run both ways (hand-made result folders, hand-derived seconds; no framework runs)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import shard_costs  # bench/ is not a package: on the path above


def shard(folder: Path, records: list[tuple[str, str, str, float]], builds: dict[str, float]) -> Path:
    """A `convdiff run --out` folder: (case id, backend, output, seconds) records and summary.json's builds."""
    folder.mkdir()
    lines = [json.dumps({"case_id": c, "file": "f.yaml", "backend": b, "device": "cpu", "output": o, "status": "pass",
                         "duration_s": s}) for c, b, o, s in records]
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text(json.dumps({"builds": {t: {"seconds": s} for t, s in builds.items()}}))
    return folder


def test_a_cases_cost_is_its_records_and_its_share_of_the_batched_builds(tmp_path: Path) -> None:
    folder = shard(tmp_path / "s", [("a", "tvm", "out", 1.0), ("a", "tvm", "relation:batch", 2.0),
                                    ("b", "tvm", "out", 0.5), ("b", "torch", "grad_input", 0.25)], {"tvm-cpu": 9.0})
    per_case, per_target = shard_costs.costs(*shard_costs.read_records(folder)[:3])
    assert per_case == pytest.approx({"f.yaml::a": 1.0 + 2.0 + 4.5, "f.yaml::b": 0.5 + 0.25 + 4.5})
    assert per_target == pytest.approx({"tvm-cpu": 12.5, "torch-cpu": 0.25})


def test_a_cold_shard_enters_at_what_its_cases_cost_warm(tmp_path: Path) -> None:
    """Ratios from a pair: tvm's forward 10 s cold, 1 s warm (0.1); its builds 100 s cold, 5 s warm (0.05); torch's
    forward 2 s both ways (1.0); the pair's overall 8 / 112. A cold shard's case: tvm forward 30 s -> 3 s, torch
    forward 4 s -> 4 s, a tvm relation no pair has 7 s -> 7 x 8/112 s, the whole tvm build 40 s -> 2 s."""
    cold = shard(tmp_path / "cold", [("a", "tvm", "out", 10.0), ("a", "torch", "out", 2.0)], {"tvm-cpu": 100.0})
    warm = shard(tmp_path / "warm", [("a", "tvm", "out", 1.0), ("a", "torch", "out", 2.0)], {"tvm-cpu": 5.0})
    per, builds, overall = ratios = shard_costs.warm_ratios([(cold, warm)])
    assert per == pytest.approx({("tvm-cpu", "out"): 0.1, ("torch-cpu", "out"): 1.0})
    assert builds == pytest.approx({"tvm-cpu": 0.05}) and overall == pytest.approx(8 / 112)
    third = shard(tmp_path / "third", [("c", "tvm", "out", 30.0), ("c", "torch", "out", 4.0),
                                       ("c", "tvm", "relation:threads", 7.0)], {"tvm-cpu": 40.0})
    per_case, _ = shard_costs.costs(*shard_costs.read_records(third)[:3], ratios)
    assert per_case == pytest.approx({"f.yaml::c": 3.0 + 4.0 + 7.0 * 8 / 112 + 2.0})


def test_a_case_recorded_warm_keeps_its_recorded_cost(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The table written from a warm shard and a cold one: the case both ran keeps the warm run's seconds, the case
    only the cold one ran gets its converted cost (here the pair's ratio, 0.5 on torch's forward)."""
    cold = shard(tmp_path / "cold", [("a", "torch", "out", 4.0)], {})
    warm = shard(tmp_path / "warm", [("a", "torch", "out", 2.0)], {})
    other = shard(tmp_path / "other", [("a", "torch", "out", 10.0), ("b", "torch", "out", 6.0)], {})
    table = tmp_path / "costs.json"
    assert shard_costs.main([str(warm), "--cold", str(other), "--pair", str(cold), str(warm),
                             "--write", str(table)]) == 0
    seconds = json.loads(table.read_text())["seconds"]
    assert seconds == pytest.approx({"f.yaml::a": 2.0, "f.yaml::b": 3.0})
    assert "1 cold converted" in json.loads(table.read_text())["measured"]
    with pytest.raises(SystemExit):  # a cold shard with nothing to convert it by
        shard_costs.main([str(warm), "--cold", str(other)])
    assert "--cold needs at least one --pair" in capsys.readouterr().err
