"""`paddle2onnx-ort`: paddle.nn conv layers exported by paddle.onnx.export (paddle2onnx) and run by
ONNX Runtime, through real isolated workers.

Passing cases use integer data (exact in float32) and the `paddle` backend's own arguments. The
failing side is a real paddle2onnx divergence: it aborts the process (SIGABRT) on a channels-last
conv instead of raising, pinned in cases/known_issues.yaml. The export's temporary files are
removed, also those an aborted worker leaves (by the next worker's setup).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.onnx.paddle2onnx_ort import TMP_PREFIX, remove_stale_dirs
from harness.execution.records import Record
from tests.helpers import make_case, run_on

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_paddle2onnx_ort_backend")

if any(importlib.util.find_spec(m) is None for m in ("paddle", "paddle2onnx", "onnx", "onnxruntime")):
    pytest.skip("paddle/paddle2onnx/onnx/onnxruntime are not installed", allow_module_level=True)

COMMON = dict(in_channels=4, out_channels=6, bias=True, data="integers")
CASES = [
    make_case(id="c2d_nhwc", op="conv2d", input_size=[6, 5], kernel_size=3, padding=1, layout="channels_last",
              **COMMON),
    make_case(id="c2d_pairs", op="conv2d", input_size=[6, 7], kernel_size=3, stride=2, padding=[[1, 0], [0, 2]],
              groups=2, **COMMON),
    make_case(id="t2d_outpad", op="conv_transpose2d", input_size=[4, 5], kernel_size=3, stride=2, padding=1,
              output_padding=1, **COMMON),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Record], dict[str, Record], Path]]:
    """A cold run and a warm one, in a private cache (workers inherit it through the environment)."""
    root = tmp_path_factory.mktemp("convdiff-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONVDIFF_CACHE", str(root))
        cold, warm = ({r.case_id: r for r in run_on(CASES, ["paddle2onnx-ort"], timeout=180, known=True)}
                      for _ in range(2))
        yield cold, warm, root / "paddle2onnx"


@pytest.fixture(scope="module")
def records(runs: tuple[dict[str, Record], dict[str, Record], Path]) -> dict[str, Record]:
    return runs[0]


def test_passes_exactly_and_records_the_export(records: dict[str, Record]) -> None:
    for cid in ("c2d_pairs", "t2d_outpad"):
        r = records[cid]
        assert r.status == "pass" and r.max_abs_err == 0.0, (cid, r.status, r.message)
        assert "paddle.onnx.export(layer" in r.translation and "opset" in r.translation
    assert "paddle.nn.Conv2D(" in records["c2d_pairs"].translation
    assert "padding=[1, 0, 0, 2]" in records["c2d_pairs"].translation
    assert "output_padding=[1, 1]" in records["t2d_outpad"].translation


def test_channels_last_abort_is_the_known_converter_crash(records: dict[str, Record]) -> None:
    r = records["c2d_nhwc"]
    assert r.status == "crash" and r.known_issue == "paddle2onnx-nhwc-conv-aborts", r.message


def test_a_warm_run_exports_nothing_and_remembers_the_abort(runs) -> None:
    """The warm run reports the abort from `<key>.crashed` (backends/artifacts.py) instead of exporting again
    (the export would abort: "remembered" comes only from a worker that did not), and the same records."""
    cold, warm, cache = runs
    same = [(r.case_id, r.status, r.known_issue, r.max_abs_err) for r in cold.values()]
    assert [(r.case_id, r.status, r.known_issue, r.max_abs_err) for r in warm.values()] == same
    assert "remembered" not in cold["c2d_nhwc"].message and "SIGABRT" in cold["c2d_nhwc"].message
    assert warm["c2d_nhwc"].message.startswith(cold["c2d_nhwc"].message) and "remembered" in warm["c2d_nhwc"].message
    assert len(list(cache.glob("*.crashed"))) == 1 and len([p for p in cache.iterdir() if p.is_dir()]) == 2


def test_stale_export_dirs_of_dead_workers_are_removed(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    dead, alive = tmp_path / f"{TMP_PREFIX}999999999-x", tmp_path / f"{TMP_PREFIX}{os.getpid()}-y"
    dead.mkdir()
    alive.mkdir()
    remove_stale_dirs()
    assert not dead.exists() and alive.exists()



def test_a_conversion_abandoned_by_sys_exit_retires_the_worker() -> None:
    """paddle2onnx ends a conversion it refuses with sys.exit (here output_padding above the stride). Paddle's
    static-graph state it leaves made later exports in that process fail: a fuzz's conv1d "due to
    'conv1d_transpose_0.w_0'", a conv2d by SIGFPE (2026-12-01). The adapter asks for its worker to be replaced
    after such a refusal (Backend.stale_after_refusal; the pool's side: test_failures.py), and only then: the
    adapter in a process of its own, as a worker runs it, first on a valid case, then on that one."""
    import subprocess
    import sys

    script = """
import json
from backends.onnx.paddle2onnx_ort import Paddle2OnnxOrtBackend
from harness.model.build import make_case
from harness.numerics.inputs import make_inputs
b = Paddle2OnnxOrtBackend()
b.setup("cpu")
seen = []
for case in (make_case(id="ok", op="conv1d", in_channels=2, out_channels=2, input_size=12, kernel_size=5),
             make_case(id="exit", op="conv_transpose1d", in_channels=2, out_channels=2, input_size=12,
                       kernel_size=5, stride=2, dilation=2, output_padding=4, expect="invalid")):
    try:
        b.run(case, make_inputs(case), "cpu")
        seen.append([case.id, "ran", b.stale_after_refusal(case)])
    except Exception as exc:
        seen.append([case.id, str(exc)[:80], b.stale_after_refusal(case)])
print(json.dumps(seen))
"""
    env = {**os.environ, "CONVDIFF_CACHE": "off"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr[-2000:]
    import json

    (ok, ran, stale_ok), (_, why, stale_ex) = json.loads(out.stdout.strip().splitlines()[-1])
    assert (ok, ran, stale_ok) == ("ok", "ran", False)
    assert "sys.exit" in why and stale_ex is True, why
