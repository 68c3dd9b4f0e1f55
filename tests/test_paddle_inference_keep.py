"""paddle-inference keeps the predictor of the previous run (backends/paddle/inference.py): a run whose saved model
and Config are the same (a relation's repeat, the single rows of its batch) feeds its inputs to that predictor.

In a script of its own (paddle imported there only, forked from paddle's template), one conv with a bias and the
runs its determinism and batch relations need, in the order the worker runs them, with create_predictor counted:
the first run saves the model (a predictor on a scratch copy, not kept), the repeat creates one on the cached
files, then the single rows 2..6 reuse the predictor row 1 created. Every output is checked against the float64
oracle within the bound, and each reused one against a fresh predictor's: the same bits. Costs about 3 s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.registry import get_backend
from tests.helpers import run_named_scripts

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, sys
import numpy as np
import paddle  # noqa: F401 - forks from paddle's template
sys.path.insert(0, @ROOT@)
from backends.paddle.inference import PaddleInferenceBackend
from harness.execution.ahead import oracle_for
from harness.model.build import make_case
from harness.numerics.bound import error_bound
from harness.numerics.inputs import make_inputs
from harness.numerics.relations import variants

b = PaddleInferenceBackend()
b.setup("cpu")
made = []
create = b.inference.create_predictor
b.inference.create_predictor = lambda cfg: made.append(1) or create(cfg)
case = make_case(op="conv2d", in_channels=3, out_channels=4, input_size=7, kernel_size=3, padding=1, bias=True)
inputs = make_inputs(case)
runs = [("main", case, inputs)] + [(k, v.case, v.inputs) for k, v in
        variants(case, inputs, oracle_for(case, inputs), ("determinism", "batch")).items() if v.process == "main"]
out = {}
for name, c, i in runs:
    before = len(made)
    y = b.run(c, i, "cpu").array.astype(np.float64)
    created = len(made) - before
    ref, scale = oracle_for(c, i)[:2]
    within = bool(np.all(np.abs(y - ref) <= error_bound(c, ref, scale)))
    same = None
    if created == 0:  # reused: the same bits as a fresh predictor on this run
        kept, b.last = b.last, None
        same = bool(np.array_equal(b.run(c, i, "cpu").array.astype(np.float64), y))
        b.last = kept
    out[name] = {"created": created, "within": within, "same": same}
print("RESULT", json.dumps(out))
"""


@pytest.mark.skipif(get_backend("paddle-inference").unavailable_reason() is not None, reason="paddle not installed")
def test_a_run_of_the_same_model_feeds_the_kept_predictor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path / "cache"))
    [(code, output)] = run_named_scripts([("keep", SCRIPT.replace("@ROOT@", repr(str(ROOT))))], tmp_path)
    assert code == 0, output[-3000:]
    got = json.loads(output.split("RESULT ", 1)[1].splitlines()[0])
    assert all(r["within"] for r in got.values()), got  # every output right, reused or not
    reused = {name for name, r in got.items() if r["created"] == 0}
    assert all(got[name]["same"] for name in reused), got
    # the first run's predictor reads a scratch copy (not kept); row 0 of a batch-1 case is the case itself (no run)
    assert reused == {"row2", "row3", "row4", "row5", "row6"}, got
    assert all(got[name]["created"] == 1 for name in ("main", "again", "batch3", "batch7", "row1")), got
