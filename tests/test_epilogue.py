"""Epilogues: the float64 semantics against hand-derived values, the inputs they leave alone, the
loader's refusal of an unknown op, and the bound against torch eager on generated configs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from harness.commands.fuzz.gen import generate
from harness.commands.smoke_select import full_tests
from harness.execution.records import Record
from harness.model.build import make_case
from harness.model.loader import load_file
from harness.model.yamlmap import InputError
from harness.numerics.bound import error_bound
from harness.numerics.epilogue import activation, apply_epilogue
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference
from tests.helpers import run_on


@pytest.mark.parametrize(("name", "v", "y"), [
    ("relu", -2.0, 0.0), ("relu6", 7.5, 6.0), ("leaky_relu", -2.0, -0.2), ("clamp", -3.0, -1.0),
    ("sigmoid", 0.0, 0.5), ("tanh", 1.0, math.tanh(1.0)),
    ("gelu", 1.0, 0.5 * (1 + math.erf(1 / math.sqrt(2)))),  # the erf form, not tanh's approximation
    ("hardswish", 1.0, 4.0 / 6.0), ("hardswish", -4.0, 0.0), ("silu", 2.0, 2.0 / (1 + math.exp(-2.0))),
])
def test_activations_by_hand(name: str, v: float, y: float) -> None:
    assert activation(name, np.array([v]))[0] == pytest.approx(y, rel=1e-15, abs=1e-300)


def test_constant_ops_by_hand() -> None:
    """scale, shift, divide and batch_norm per output channel, on a 1x2x1 output (channels first)."""
    case = make_case(id="hand", op="conv1d", in_channels=1, out_channels=2, input_size=1, kernel_size=1,
                     epilogue=["scale", "shift", "divide", "batch_norm", "mul_scalar", "add_scalar"])
    z = np.array([[[1.0], [-2.0]]])
    consts = ({"c": np.array([2.0, 3.0])}, {"c": np.array([0.5, -1.0])}, {"c": np.array([4.0, -2.0])},
              {"mean": np.array([1.0, 0.0]), "var": np.array([3.0 - 1e-5, 1.0 - 1e-5]),
               "gamma": np.array([2.0, 1.0]), "beta": np.array([0.0, 1.0])},
              {"c": np.array(-2.0)}, {"c": np.array(0.25)})
    y, trace = apply_epilogue(case, z, consts)
    # channel 0: ((1*2 + 0.5) / 4 - 1) * 2 / sqrt(3) + 0 = -0.375 * 2 / sqrt(3); then * -2 + 0.25
    # channel 1: ((-2*3 - 1) / -2 - 0) * 1 / 1 + 1 = 4.5; then * -2 + 0.25
    np.testing.assert_allclose(y.ravel(), [-0.75 / math.sqrt(3) * -2 + 0.25, 4.5 * -2 + 0.25], rtol=1e-12)
    assert [s.name for s in trace.steps] == list(case.epilogue)


def test_epilogue_constants_leave_x_w_b_alone() -> None:
    base = make_case(id="keep", op="conv_transpose2d", in_channels=3, out_channels=4, input_size=5, kernel_size=3,
                     bias=True)
    with_epi = dataclasses.replace(base, epilogue=("batch_norm", "residual", "scale"))
    a, b = make_inputs(base), make_inputs(with_epi)
    for name in ("x", "w", "b"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert [set(c) for c in b.epilogue] == [{"mean", "var", "gamma", "beta"}, {"r"}, {"c"}]
    assert b.epilogue[1]["r"].shape == with_epi.output_shape and b.epilogue[2]["c"].shape == (4,)


def test_an_unknown_op_is_a_line_error(tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("cases:\n  - id: a\n    op: conv2d\n    in_channels: 1\n    out_channels: 1\n"
                    "    input_size: 3\n    kernel_size: 1\n    epilogue: [relu, swish]\n")
    with pytest.raises(InputError) as err:
        load_file(path)
    assert str(err.value).startswith(f"{path}:8: epilogue[1]: must be one of")


def test_bound_covers_a_fold() -> None:
    """A per-channel scale folded into the weights (each fl(c*w) rounded to float32) stays in the bound."""
    case = make_case(id="fold", op="conv_transpose2d", in_channels=8, out_channels=8, input_size=6, kernel_size=5,
                     stride=2, bias=True, epilogue=["scale", "shift"])
    inputs = make_inputs(case)
    ref, scale, trace = reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)
    c, t = (inputs.epilogue[i]["c"].astype(np.float64) for i in (0, 1))
    w = (inputs.w.astype(np.float64) * c.reshape(1, -1, 1, 1)).astype(np.float32)  # folded, rounded
    b = (inputs.b.astype(np.float64) * c + t).astype(np.float32)
    plain = dataclasses.replace(case, epilogue=())
    folded = reference(plain, inputs.x, w, b)[0].astype(np.float32)  # and the result rounded
    ratio = np.abs(folded - ref) / error_bound(case, ref, scale, trace=trace)
    assert 0 < ratio.max() <= 1


# make test runs the first 100 configs of each dtype (the 250 took 8.6 s of make test's 488.6 s, 2026-12-02, 2-core
# AMD EPYC Zen 5); the nightly (CONVDIFF_FULL_TESTS=1) all 250
CONFIGS = 250 if full_tests() else 100


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_torch_eager_passes_generated_epilogue_configs(dtype: str) -> None:
    """The bound never false-alarms on torch eager: generated configs with epilogues, per dtype (CONFIGS)."""
    cases = []
    for cfg in generate(7, invalid_rate=0.0):
        if cfg.case is not None and cfg.case.epilogue:
            cases.append(dataclasses.replace(cfg.case, dtype=dtype, data="normal", id=f"{cfg.case.id}_{dtype}"))
        if len(cases) == CONFIGS:
            break
    records: list[Record] = run_on(cases, ["torch"], known=True)  # a plain conv's host-dependent issue may apply
    assert len(records) == len(cases)
    bad = [(r.case_id, r.params["op"], r.params["epilogue"], r.status, r.message) for r in records
           if r.status != "pass" and not (r.known_issue and r.status in r.known_status)]
    assert not bad, bad[:5]
    assert max(r.bound_ratio or 0 for r in records) > 0.05  # the bound is not vacuous
