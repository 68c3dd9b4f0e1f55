"""`convdiff repro` for epilogue cases: the script's own NumPy part equals the harness's, and each eager
framework's script, run alone, reaches the harness's verdict.

The NumPy part (reports/repro/epilogue.py) is checked in this process against harness/numerics:
the constants drawn from the seed (bit for bit), the float64 reference after the epilogue and the
bound carried through it, for every op in both layouts and every float dtype. Then one harness run of
corpus epilogue cases on the eager backends, and each script in its own interpreter, two at a time:
its verdict, error and error/bound are the record's (never a verdict fixed here: the record is the
harness's on this host).
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness.execution.records import Record
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.bound import error_bound
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference
from reports.repro.script import ReproUnavailable, script_for
from tests.epilogue_repro import JUDGED, assert_scripts_reach_the_records, records_for
from tests.helpers import make_case

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_repro_epilogue")

CHAINS = [list(EPILOGUE_OPS), ["batch_norm", "gelu", "residual"], ["mul_scalar", "add_scalar", "sigmoid"],
          ["residual", "divide", "shift", "hardswish", "silu"], ["scale", "relu6", "leaky_relu", "tanh", "clamp"],
          ["sigmoid", "scale", "gelu", "batch_norm", "silu", "add_scalar"]]  # M after an activation meets a fold
# (file, case id): chosen for what the scripts must feed: per-channel constants after a strided transpose,
# batch norm and a channels_last residual after a transpose, a channels_first residual (moved to N*C where TF
# runs N*C only), scalars with a grouped channels_last conv, float16
CHOSEN = [("epilogues.yaml", "smoke_fold_transpose"),
          ("epilogues.yaml", "chain_channels_last[op=conv_transpose1d,epilogue=batch_normxgeluxresidual]"),
          ("epilogues.yaml", "chain_strided[op=conv2d,epilogue=residualxclampxtanh]"),
          ("epilogues.yaml", "smoke_channels_last_grouped"),
          ("epilogues.yaml", "smoke_half[dtype=float16,epilogue=residualxhardswish]")]
BACKENDS = ["torch", "tensorflow", "tensorflow-keras", "paddle", "jax", "jax-jit"]


def numpy_cases() -> list[Case]:
    """Every epilogue op, in both layouts and every float dtype, after a conv and a transposed conv."""
    out = []
    for k, chain in enumerate(CHAINS):
        for op, layout, dtype, data in (("conv2d", "channels_first", "float32", "normal"),
                                        ("conv_transpose1d", "channels_last", "float16", "normal"),
                                        ("conv_transpose2d", "channels_first", "bfloat16", "uniform"),
                                        ("conv1d", "channels_last", "float64", "normal"),
                                        ("conv2d", "channels_last", "float32", "integers")):
            out.append(make_case(id=f"c{k}_{op}_{dtype}", op=op, in_channels=4, out_channels=6, groups=2, input_size=5,
                                 kernel_size=3, stride=2, bias=True, layout=layout, dtype=dtype, data=data,
                                 epilogue=chain, seed=11 + k))
    return out


def _record(case: Case, backend: str) -> Record:
    return Record(case_id=case.id, file="inline.yaml", op=case.op, params=case.params(), backend=backend,
                  backend_version="", device="cpu", dtype=case.dtype, status="mismatch")


@pytest.mark.parametrize("case", numpy_cases(), ids=lambda c: c.id)
def test_the_numpy_part_is_the_harness(case: Case) -> None:
    """Constants bit for bit, the reference after the epilogue, and its bound, as harness/numerics has them."""
    space: dict = {"__name__": "repro"}
    with contextlib.redirect_stdout(io.StringIO()), pytest.raises(SystemExit):
        exec(compile(script_for(_record(case, "fault:nan")), "repro.py", "exec"), space)  # NumPy only
    inputs = make_inputs(case)
    for mine, theirs in zip(space["CONSTS"], inputs.epilogue, strict=True):
        assert mine.keys() == theirs.keys()
        for k in mine:
            assert np.array_equal(mine[k], np.asarray(theirs[k], dtype=np.float64)), k
    ref, scale, trace = reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)
    assert np.allclose(space["ref"], ref, rtol=1e-12, atol=1e-12)
    assert np.allclose(space["scale"], scale, rtol=1e-12, atol=0)
    bound = error_bound(case, ref, scale, trace=trace)
    assert np.allclose(space["bound"], bound, rtol=1e-9, atol=0)


@pytest.fixture(scope="module")
def records() -> list[Record]:
    """The chosen cases on the eager backends and the fault:nan double, from one harness run."""
    return records_for(CHOSEN, [*BACKENDS, "fault:nan"])


def test_scripts_reach_the_harness_verdict(records: list[Record], tmp_path: Path) -> None:
    for rec in records:  # the adapter's own lines are the script's
        if rec.status in JUDGED and rec.backend in BACKENDS:
            for line in rec.translation.splitlines():
                if line.lstrip().startswith("y = "):
                    assert line.strip() in script_for(rec), (rec.backend, line)
    assert_scripts_reach_the_records(records, tmp_path, [*BACKENDS, "fault:nan"])


def test_a_changed_epilogue_is_refused(records: list[Record]) -> None:
    """A record whose epilogue lines the adapter no longer writes gets no script claiming to reproduce it."""
    changed = 0
    for rec in records:
        if rec.backend in BACKENDS and rec.case_id == "smoke_fold_transpose" and rec.translation:  # [scale, shift, relu]
            with pytest.raises(ReproUnavailable, match="changed since the record"):
                script_for(replace(rec, translation=re.sub("relu", "gelu", rec.translation, flags=re.I)))
            changed += 1
    assert changed >= 3
