"""torch-inductor keeps the module the previous run compiled (backends/torch/inductor.py): a run whose module is
the same (parameters, baked arrays, input shapes) calls it again instead of compiling anew.

In a script of its own (torch and inductor imported there only, forked from torch-inductor's template), one conv
with a bias and the runs its determinism and batch relations need, in the order the worker runs them: the repeat,
the batch of 7 and every single row call the kept module; the batch of 3 makes dynamo recompile it with a symbolic
batch (one graph, which then serves the batch of 7; the single rows hit the case's own static graph), and a scaled
bias compiles its own. Every output is checked against the float64 oracle within the bound, and each output that
traced no graph against a fresh compile of the same run: the same bits. Costs about 4 s (one cold inductor
compile, the others small).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends.registry import get_backend
from tests.helpers import run_named_scripts

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("torch-inductor-cpu")

SCRIPT = r"""
import dataclasses, json, sys
import numpy as np
import torch  # noqa: F401 - forks from torch-inductor's template
sys.path.insert(0, @ROOT@)
from backends.torch.inductor import TorchInductorBackend
from harness.execution.ahead import oracle_for
from harness.model.build import make_case
from harness.numerics.bound import error_bound
from harness.numerics.inputs import make_inputs
from harness.numerics.relations import scaled, variants

b = TorchInductorBackend()
b.setup("cpu")
stats = b.dynamo.utils.counters["stats"]
case = make_case(op="conv2d", in_channels=3, out_channels=4, input_size=7, kernel_size=3, padding=1, bias=True)
inputs = make_inputs(case)
runs = [("main", case, inputs)] + [(k, v.case, v.inputs) for k, v in
        variants(case, inputs, oracle_for(case, inputs), ("determinism", "batch")).items() if v.process == "main"]
runs.append(("bias scaled", case, scaled(case, inputs, 3)))
out, ys = {}, {}
for name, c, i in runs:
    before = stats["unique_graphs"]
    ys[name] = y = b.run(c, i, "cpu").array.astype(np.float64)
    ref, scale = oracle_for(c, i)[:2]
    within = bool(np.all(np.abs(y - ref) <= error_bound(c, ref, scale)))
    out[name] = {"traced": stats["unique_graphs"] - before, "within": within, "same": None}
b.keep = False  # then each reused run compiled afresh (a reset each: done after the sequence, not inside it)
for name, c, i in runs:
    if out[name]["traced"] == 0:
        out[name]["same"] = bool(np.array_equal(b.run(c, i, "cpu").array.astype(np.float64), ys[name]))
print("RESULT", json.dumps(out))
"""


@pytest.mark.skipif(get_backend("torch-inductor").unavailable_reason() is not None, reason="torch-inductor not installed")
def test_a_run_of_the_same_module_calls_the_kept_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVDIFF_CACHE", str(tmp_path / "cache"))
    [(code, output)] = run_named_scripts([("keep", SCRIPT.replace("@ROOT@", repr(str(ROOT))))], tmp_path)
    assert code == 0, output[-3000:]
    got = json.loads(output.split("RESULT ", 1)[1].splitlines()[0])
    assert all(r["within"] for r in got.values()), got  # every output right, reused or not
    reused = {name for name, r in got.items() if r["traced"] == 0}
    assert all(got[name]["same"] for name in reused), got
    # row 0 of a batch-1 case is the case itself (no run); the batch of 3 is the second shape dynamo sees
    assert reused == {"again", "batch7", "row1", "row2", "row3", "row4", "row5", "row6"}, got
    assert all(got[name]["traced"] == 1 for name in ("main", "batch3", "bias scaled")), got
