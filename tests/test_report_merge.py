"""`convdiff report`: shards merge to the unsharded run, and a baseline marks findings new, still present or gone."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.commands.cli import main
from harness.execution.records import Record
from harness.judge.summary import summarize
from reports.merge import build_report as merge_build
from reports.merge import diff_baseline, merge_records
from tests.report_records import ROOT, synthetic, write_shard


def _norm(summary: dict[str, Any]) -> dict[str, Any]:
    s = {k: v for k, v in summary.items() if k not in ("fingerprint", "baseline")}
    s["findings"] = sorted([{**f, "cases": sorted(f["cases"])} for f in s["findings"]], key=str)
    s["unexpected_results"] = sorted(s["unexpected_results"], key=str)
    return s


def test_merge_of_shards_equals_unsharded(tmp_path: Path) -> None:
    recs = synthetic(600)
    shards = [write_shard(tmp_path / f"shard{i}", recs[i::3]) for i in range(3)]
    shards.append(write_shard(tmp_path / "dup", recs[:50]))  # a re-run shard: identical results again
    merged, dropped = merge_records(shards)
    assert dropped == 50 and len(merged) == 600
    assert merge_build(shards, tmp_path / "merged", ["report"]) == 1
    got = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert _norm(got) == _norm(summarize(recs))
    assert set(got["fingerprint"]["targets"]) == {"shard0-cpu", "shard1-cpu", "shard2-cpu", "dup-cpu"}
    for name in ("report.html", "junit.xml", "results.jsonl"):
        assert (tmp_path / "merged" / name).stat().st_size > 0


def test_real_shards_merge_to_the_unsharded_run(tmp_path: Path) -> None:
    """`convdiff run --shard 1/3, 2/3, 3/3`, then `convdiff report`: same summary as one unsharded run."""
    args = ["run", "cases/conv2d.yaml", "--backends", "torch,fault:nan", "--tier", "smoke"]
    if not (ROOT / "cases" / "conv2d.yaml").exists():
        pytest.skip("no cases/conv2d.yaml in this checkout")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert main([*args, "--out", str(tmp_path / "all")]) == 1  # fault:nan mismatches are unexpected
        for i in (1, 2, 3):
            main([*args, "--shard", f"{i}/3", "--out", str(tmp_path / f"s{i}")])
        # a shard's --out directory stands for its results.jsonl
        rc = main(["report", str(tmp_path / "s1" / "results.jsonl"), str(tmp_path / "s2"), str(tmp_path / "s3"),
                   "--out", str(tmp_path / "merged")])
    finally:
        os.chdir(cwd)
    assert rc == 1
    whole = json.loads((tmp_path / "all" / "summary.json").read_text())
    merged = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert _norm(merged) == _norm(whole)
    assert (tmp_path / "merged" / "report.html").exists() and (tmp_path / "merged" / "junit.xml").exists()


def test_baseline_marks_new_still_gone(tmp_path: Path) -> None:
    recs = synthetic(400)
    old = summarize(recs)
    # tonight: one old finding gone (all conv3d torch mismatches pass), one new finding (a timeout on a new case)
    tonight = [Record(**{**r.__dict__, "status": "pass", "where": None})
               if (r.op == "conv3d" and r.backend == "torch" and r.status == "mismatch") else r for r in recs]
    tonight.append(Record(**{**recs[1].__dict__, "case_id": "brand_new", "status": "timeout", "bound_ratio": None,
                                "diagnosis": None}))
    diff = diff_baseline(tonight, old)
    states = {tuple(m["key"]): m["state"] for m in diff["findings"]}
    new_key = (recs[1].backend, "cpu", recs[1].op, "timeout", None, None, "out")  # ..., known_issue, output
    assert states[new_key] == "new"
    assert {g["op"] for g in diff["gone"]} == {"conv3d"} and all(g["backend"] == "torch" for g in diff["gone"])
    assert diff["new_unexpected"] == 1 and diff["new"] == 1
    assert all(s == "still present" for k, s in states.items() if k != new_key)

    base = tmp_path / "old"
    write_shard(base, recs)
    same = write_shard(tmp_path / "same", recs)
    assert main(["report", str(same), "--out", str(tmp_path / "o1"), "--baseline", str(base / "summary.json")]) == 0
    worse = write_shard(tmp_path / "worse", tonight)
    assert main(["report", str(worse), "--out", str(tmp_path / "o2"), "--baseline", str(base)]) == 1
    html = (tmp_path / "o2" / "report.html").read_text()
    assert "Gone since the baseline" in html and 'class="tag new"' in html
    # a new finding that is a known issue does not fail the night
    known_new = [*recs, Record(**{**recs[4].__dict__, "case_id": "k", "status": "rejected", "known_issue": "ki",
                                  "known_status": ["rejected"]})]
    assert main(["report", str(write_shard(tmp_path / "kn", known_new)), "--out", str(tmp_path / "o3"),
                 "--baseline", str(base)]) == 0
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2


def test_baseline_compares_like_hosts_only() -> None:
    """A target whose host facts changed is not diffed: nothing of it is "gone", its failures count as unexpected."""
    recs = synthetic(400)
    keys = {"torch-cpu": ["aaa"], "tensorflow-cpu": ["bbb"], "paddle-cpu": ["ccc"]}
    old = summarize(recs, {"target_host_keys": keys})
    tonight = [r for r in recs if r.backend != "torch" or r.status == "pass"]   # every torch finding gone...
    moved = {**keys, "torch-cpu": ["zzz"]}                                        # ...but torch ran on another host
    diff = diff_baseline(tonight, old, "", {"target_host_keys": moved})
    assert diff["host_changed"] == ["torch-cpu"] and not diff["gone"] and diff["new_unexpected"] == 0
    same = diff_baseline(tonight, old, "", {"target_host_keys": keys})
    assert same["host_changed"] == [] and {g["backend"] for g in same["gone"]} == {"torch"}
    # a still-failing target on a changed host: its unexpected findings count as with no baseline
    changed = diff_baseline(recs, old, "", {"target_host_keys": moved})
    unexpected_torch = {tuple(getattr(r, k) for k in ("backend", "device", "op", "status", "diagnosis", "known_issue"))
                        for r in recs if r.backend == "torch" and r.unexpected}
    assert changed["new_unexpected"] == len(unexpected_torch) > 0
    assert all(m["state"] == "host changed" for m in changed["findings"] if m["key"][0] == "torch")


def test_a_directory_without_results_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"convdiff: error: no results.jsonl in: {tmp_path / 'empty'}\n"
