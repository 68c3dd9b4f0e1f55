"""TensorFlow's persistent XLA cache (backends/tensorflow/xla_cache.py): keyed by what the compiled code is for,
off where asked, and a warm run compiles nothing and gives the records a run without it gives."""

from __future__ import annotations

import json

import pytest

from backends.registry import get_backend
from backends.tensorflow import xla_cache as tf_xla_cache

FLAG = tf_xla_cache.FLAG


def _enabled(monkeypatch, tmp_path, version: str = "2.21.0", **env: str) -> str | None:
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path))
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.delenv("CONVDIFF_CACHE_WRITE", raising=False)
    for name in tf_xla_cache.KEYED_ENV:
        monkeypatch.delenv(name, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return tf_xla_cache.enable(version)


def test_directory_follows_version_and_xla_flags_and_lands_in_tf_xla_flags(tmp_path, monkeypatch):
    first = _enabled(monkeypatch, tmp_path)
    assert first is not None and first.startswith(str((tmp_path / "tf-xla").resolve()))
    import os

    assert os.environ["TF_XLA_FLAGS"] == f"{FLAG}={first}"
    assert _enabled(monkeypatch, tmp_path) == first  # same host, same settings: same directory
    assert _enabled(monkeypatch, tmp_path, XLA_FLAGS="--xla_cpu_enable_fast_math=true") not in (None, first)
    assert _enabled(monkeypatch, tmp_path, TF_ENABLE_ONEDNN_OPTS="1") not in (None, first)  # the host matrix's rows
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS")
    assert _enabled(monkeypatch, tmp_path, TF_XLA_FLAGS="--tf_xla_auto_jit=2") not in (None, first)
    assert os.environ["TF_XLA_FLAGS"].startswith("--tf_xla_auto_jit=2 ")  # the user's flags are kept
    other = _enabled(monkeypatch, tmp_path, version="2.20.0")
    assert other is not None and other != first


@pytest.mark.parametrize("env", [{"CONVDIFF_CACHE": "off"}, {"CONVDIFF_CACHE_WRITE": "second"},
                                 {"TF_XLA_FLAGS": f"{FLAG}=/elsewhere"}])
def test_off_where_asked(tmp_path, monkeypatch, env):
    assert _enabled(monkeypatch, tmp_path, **env) is None
    assert "/elsewhere" in env.get("TF_XLA_FLAGS", "/elsewhere")
    import os

    assert os.environ.get("TF_XLA_FLAGS", "") == env.get("TF_XLA_FLAGS", "")


def test_warm_run_compiles_nothing_and_gives_the_same_records(tmp_path, monkeypatch):
    from harness.commands.cli import main
    from harness.execution.warm_pool import POOL

    for b in ("tf-xla", "tensorflow-keras"):
        if get_backend(b).unavailable_reason():
            pytest.skip(get_backend(b).unavailable_reason())
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    monkeypatch.setattr(POOL, "enabled", False)  # each run its own workers, as `convdiff run` has
    cases = tmp_path / "c.yaml"  # keras compiles a grouped conv with XLA on CPU; tf-xla compiles every case
    cases.write_text("defaults: {op: conv2d, in_channels: 4, out_channels: 6, input_size: 7, kernel_size: 3}\n"
                     "cases:\n  - id: grouped\n    groups: 2\n  - id: strided\n    stride: 2\n    padding: same\n"
                     "  - id: epi\n    groups: 2\n    epilogue: [scale, relu]\n")
    runs = []
    for i, cache in enumerate(["off", "cache", "cache"]):
        monkeypatch.setenv("CONVDIFF_CACHE", cache if cache == "off" else str(tmp_path / cache))
        main(["run", str(cases), "--backends", "tf-xla,tensorflow-keras", "--out", str(tmp_path / f"out{i}")])
        recs = [json.loads(ln) for ln in (tmp_path / f"out{i}" / "results.jsonl").read_text().splitlines()]
        entries = {p: p.stat().st_mtime_ns for p in (tmp_path / "cache" / "tf-xla").rglob("*.pb")} if i else {}
        runs.append((sorted((r["backend"], r["case_id"], r["status"], r["max_abs_err"], r["message"])
                            for r in recs), entries))
    assert runs[0][0] == runs[1][0] == runs[2][0]  # no verdict, error or message differs with the cache
    assert all(r[2] == "pass" for r in runs[0][0])
    assert len(runs[1][1]) >= 4 and runs[1][1] == runs[2][1]  # executables stored cold, none written warm
