"""The per-case artefact cache (backends/artifacts.py): a warm run repeats no export, and no verdict changes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from backends.artifacts import ArtifactCache, case_key
from harness.numerics.inputs import make_inputs

from .helpers import make_case


def test_fetch_builds_once_remembers_refusals_and_obeys_off(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    cache, calls = ArtifactCache("kind"), []

    def build() -> dict[str, bytes]:
        calls.append(1)
        return {"model.onnx": b"abc", "meta.json": b"{}"}

    assert cache.fetch("k1", build, str) == ({"model.onnx": b"abc", "meta.json": b"{}"}, "built")
    files, how = cache.fetch("k1", build, str)
    assert files["model.onnx"] == b"abc" and how.startswith("cache hit") and len(calls) == 1

    def refuse() -> dict[str, bytes]:
        calls.append(2)
        raise ValueError("no such op")

    assert cache.fetch("k2", refuse, lambda e: f"refused: {e}") == ("refused: no such op", "refused")
    assert cache.fetch("k2", refuse, str)[0] == "refused: no such op" and calls.count(2) == 1
    monkeypatch.setenv("CONVDIFF_CACHE", "off")
    off = ArtifactCache("kind")
    off.fetch("k1", build, str)
    off.fetch("k1", build, str)
    assert calls.count(1) == 3  # nothing stored, nothing loaded


def test_second_sighting_policy_stores_on_the_second_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    monkeypatch.setenv("CONVDIFF_CACHE_WRITE", "second")
    cache = ArtifactCache("kind")
    cache.fetch("k", lambda: {"a": b"1"}, str)
    assert not (tmp_path / "kind" / "k").exists() and (tmp_path / "kind" / "k.seen").exists()
    cache.fetch("k", lambda: {"a": b"1"}, str)
    assert (tmp_path / "kind" / "k" / "a").read_bytes() == b"1"


def test_key_follows_what_the_model_bakes_in_not_the_seed_label():
    a = make_case(id="a", op="conv2d", in_channels=2, out_channels=3, input_size=5, kernel_size=3)
    b = make_case(id="b", op="conv2d", in_channels=2, out_channels=3, input_size=5, kernel_size=3)
    ia, ib = make_inputs(a), make_inputs(b)
    salt = {"torch": "x"}
    assert case_key(a, ia, salt) != case_key(a, ia, {"torch": "y"})  # another framework version
    same_w = type(ib)(**{**ib.__dict__, "w": ia.w, "b": ia.b})
    assert case_key(b, same_w, salt) == case_key(a, ia, salt)  # same parameters, same baked arrays
    other_w = type(ia)(**{**ia.__dict__, "w": ia.w + np.float32(1)})
    assert case_key(a, other_w, salt) != case_key(a, ia, salt)


def test_key_follows_a_quantized_cases_parameters():
    """The scales and zero points are baked into a quantized model but drawn from the seed (y's from x): two
    draws with the same w and b are two models."""
    from dataclasses import replace

    a = make_case(id="a", op="conv1d", in_channels=1, out_channels=2, input_size=3, kernel_size=1, dtype="uint8",
                  quant={"range": "narrow"})
    ia = make_inputs(a)
    assert ia.quant is not None
    for change in ({"x_scale": ia.quant.x_scale * 2}, {"y_zero_point": ia.quant.y_zero_point + 1},
                   {"w_scale": ia.quant.w_scale * 2}, {"per_channel": True}):
        other = replace(ia, quant=replace(ia.quant, **change))
        assert case_key(a, other, {}) != case_key(a, ia, {}), change
    assert case_key(a, replace(ia, quant=replace(ia.quant)), {}) == case_key(a, ia, {})


@pytest.mark.parametrize("backend", ["torch-onnx-ort"])
def test_warm_run_exports_nothing_and_gives_the_same_records(tmp_path, monkeypatch, backend):
    from backends.registry import get_backend
    from harness.commands.cli import main

    if get_backend(backend).unavailable_reason():
        pytest.skip(get_backend(backend).unavailable_reason())
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path / "cache"))
    cases = tmp_path / "c.yaml"
    cases.write_text("defaults: {op: conv_transpose2d, in_channels: 2, out_channels: 3, input_size: 5, kernel_size: 3}\n"
                     "cases:\n  - id: a\n  - id: b\n    stride: 2\n    output_padding: 1\n"
                     "  - id: c\n    epilogue: [scale, relu]\n")
    runs = []
    for i in range(2):
        main(["run", str(cases), "--backends", backend, "--out", str(tmp_path / f"out{i}")])
        entries = sorted(p.name for p in (tmp_path / "cache" / "torch-onnx").iterdir())
        mtimes = [p.stat().st_mtime_ns for p in (tmp_path / "cache" / "torch-onnx").rglob("*")]
        recs = [json.loads(ln) for ln in (tmp_path / f"out{i}" / "results.jsonl").read_text().splitlines()]
        runs.append((entries, mtimes, [(r["case_id"], r["status"], r["max_abs_err"]) for r in recs]))
    assert len(runs[0][0]) == 3 and runs[0][:2] == runs[1][:2]  # one entry per case, none written again
    assert runs[0][2] == runs[1][2] and all(s == "pass" for _, s, _ in runs[0][2])


def _two_runs(cases, backend: str, timeout: float) -> list[list]:
    from harness.execution.runner import run_cases
    from harness.judge.verdict import Verdicts

    runs: list[list] = []
    for _ in range(2):
        records: list = []
        run_cases(cases, [(backend, "cpu")], records.append, Verdicts(), timeout=timeout)
        runs.append(records)
    return runs


def test_a_build_that_kills_its_worker_is_remembered_not_repeated(tmp_path, monkeypatch):
    """fault:build_abort aborts in every build: the first run's crashes are stored as `<key>.crashed`, and the
    second run reports the same crashes from them (the build would abort again: a "remembered" message can
    only come from a worker that did not build)."""
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    cases = [make_case(id=f"c{i}", op="conv2d", in_channels=2, out_channels=2, input_size=5, kernel_size=3, stride=s)
             for i, s in enumerate((1, 2))]
    # c2 asks for gradients too: an adapter with no gradient path answers them `unsupported`, both when its
    # forward kills the worker (cold) and when the crash is remembered (warm, the worker lives on)
    cases.append(make_case(id="c2", op="conv2d", in_channels=2, out_channels=2, input_size=5, kernel_size=3,
                           gradients=True))
    cold, warm = _two_runs(cases, "fault:build_abort", timeout=60.0)
    grads = [("c2", "unsupported")] * len(cases[2].gradient_outputs)
    assert [(r.case_id, r.status) for r in cold] == [(r.case_id, r.status) for r in warm] == [
        ("c0", "crash"), ("c1", "crash"), ("c2", "crash"), *grads]
    forward = [r for r in cold + warm if r.status == "crash"]
    assert all("SIGABRT" in r.message and "remembered" not in r.message for r in forward[:3]), [r.message for r in cold]
    assert all("SIGABRT" in r.message and "remembered" in r.message for r in forward[3:]), [r.message for r in warm]
    assert all("no gradient path" in r.message for r in cold + warm if r.status == "unsupported")
    assert len(list((tmp_path / "fault-build").glob("*.crashed"))) == 3
    assert not list((tmp_path / "building").iterdir())  # each attempt settled by the controller


def test_a_build_killed_for_its_timeout_is_not_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    case = make_case(id="h", op="conv1d", in_channels=1, out_channels=1, input_size=4, kernel_size=3)
    cold, warm = _two_runs([case], "fault:build_hang", timeout=1.5)
    assert [r.status for r in cold + warm] == ["timeout", "timeout"], [r.message for r in cold + warm]
    assert not list((tmp_path / "fault-build").glob("*.crashed"))
    assert not list((tmp_path / "building").iterdir())


def test_an_attempt_file_older_than_the_worker_is_never_remembered(tmp_path, monkeypatch):
    """A pid is reused: the file a dead process left under it is not the new worker's build."""
    import os
    import time

    from backends.artifacts import attempt_file, settle_attempt

    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    for age, remembered in ((0.0, "kind/k1"), (60.0, None)):
        path = attempt_file(4242)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(remembered or "kind/k2")
        os.utime(path, (time.time() - age, time.time() - age))
        assert settle_attempt(4242, time.time() - 5.0, "worker killed by SIGABRT") == remembered
        assert not path.exists()
    assert (tmp_path / "kind" / "k1.crashed").read_text() == "worker killed by SIGABRT"
    assert not (tmp_path / "kind" / "k2.crashed").exists()
    assert settle_attempt(4243, 0.0, "x") is None  # no attempt: nothing to remember

