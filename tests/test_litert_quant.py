"""`litert` / `litert-ref` on quantized cases: a fully int8 TFLite model with the case's quantization
parameters pinned, run by real isolated workers and judged by the exact integer oracle.

Also the declared-rounding allowance (harness/numerics/bound.py quant_units) against a simulation of
TFLite's documented fixed-point requantization (MultiplyByQuantizedMultiplier), written from its
definition: a Q31 multiplier, a rounding doubling high multiply, then a rounding right shift.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from backends.litert.interpreter import LiteRtBackend
from harness.execution.records import Record
from harness.numerics.bound import QUANT_ROUNDING, error_bound, quant_units
from tests.helpers import make_case, run_on

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_litert_quant")

COMMON = dict(in_channels=4, out_channels=6, input_size=7, kernel_size=3, bias=True, tags=["quantized"])
RUNS = [
    # channels_first + asymmetric pads: QUANTIZE, TRANSPOSE, PAD, CONV_2D, TRANSPOSE, QUANTIZE all pinned
    make_case(id="c2d_u8_pc_pads", op="conv2d", dtype="uint8", stride=2, padding=[[1, 0], [0, 2]],
              quant={"per_channel": True, "range": "full"}, **COMMON),
    make_case(id="c1d_s8_full", op="conv1d", dtype="int8", quant={"range": "full"}, **COMMON),
    make_case(id="t2d_u8_nhwc", op="conv_transpose2d", dtype="uint8", stride=2, layout="channels_last",
              quant={"per_channel": True, "range": "narrow"}, **COMMON),
    make_case(id="dw_s8", op="conv2d", dtype="int8", groups=4, quant={"per_channel": True, "range": "full"},
              **{**COMMON, "out_channels": 4}),
    make_case(id="c2d_pinned", op="conv2d", dtype="uint8",
              quant={"x_scale": 0.02, "x_zero_point": 3, "w_scale": 0.005, "y_scale": 0.1, "y_zero_point": 250},
              **COMMON),
]
NEEDS_LITERT = pytest.mark.skipif(
    LiteRtBackend().unavailable_reason() is not None or importlib.util.find_spec("flatbuffers") is None,
    reason="litert needs ai-edge-litert and tensorflow (pip install 'convdiff[litert]')")


def test_what_tflite_int8_cannot_state_is_unsupported_with_the_reason() -> None:
    be = LiteRtBackend()
    assert be.supports(RUNS[0], "cpu") is None and be.epilogue_reason(RUNS[0]) is None
    c3 = make_case(op="conv3d", dtype="int8", quant={"range": "narrow"}, **COMMON)
    assert "no int8 CONV_3D kernel" in (be.supports(c3, "cpu") or "")
    zw = make_case(op="conv2d", dtype="uint8", quant={"w_zero_point": 3}, **COMMON)
    assert "symmetric" in (be.supports(zw, "cpu") or "")


@pytest.fixture(scope="module")
def records() -> dict[tuple[str, str], Record]:
    return {(r.backend, r.case_id): r for r in run_on(RUNS, ["litert-ref", "litert"], timeout=300.0)}


@NEEDS_LITERT
@pytest.mark.parametrize("backend", ["litert-ref", "litert"])
@pytest.mark.parametrize("case_id", [c.id for c in RUNS])
def test_int8_model_matches_the_integer_oracle(records: dict, backend: str, case_id: str) -> None:
    r = records[(backend, case_id)]
    assert r.status == "pass", r.message
    assert r.max_abs_err is not None and r.max_abs_err <= 1.0  # units of y
    assert "TFLITE_BUILTINS_INT8" in r.translation and "requantization:" in r.translation
    if backend == "litert-ref":  # reference kernels: TFLite's own fixed-point requantization
        assert "MultiplyByQuantizedMultiplier" in r.translation
    if case_id == "c2d_pinned":  # 0.1 is no float32 value: TFLite stores it rounded, and says so
        assert "stored as float32" in r.translation


def _tflite_requantize(acc: int, m: float) -> int:
    """TFLite's MultiplyByQuantizedMultiplier(acc, QuantizeMultiplier(m)), from its definition."""
    frac, exp = math.frexp(m)
    q = round(frac * 2**31)
    if q == 2**31:
        q, exp = q // 2, exp + 1
    x = acc * 2 ** max(exp, 0)
    ab = x * q
    nudge = 2**30 if ab >= 0 else 1 - 2**30
    high = abs(ab + nudge) // 2**31 * (1 if ab + nudge >= 0 else -1)  # C++ division truncates toward zero
    e = max(-exp, 0)
    mask = (1 << e) - 1
    threshold = (mask >> 1) + (1 if high < 0 else 0)
    return (high >> e) + (1 if (high & mask) > threshold else 0)


def test_declared_roundings_stay_within_their_allowance() -> None:
    rng = np.random.default_rng(5)
    worst = 0
    for _ in range(20000):
        m = float(np.float32(10.0 ** rng.uniform(-6, -0.5)))
        acc = int(rng.integers(-(2**20), 2**20))
        v = acc * m
        if abs(v) > 2**9:
            continue
        worst = max(worst, abs(_tflite_requantize(acc, m) - round(v)))  # round(): half to even, the oracle's
    assert worst <= quant_units("fixed_point_half_away") == 1.0
    assert all(quant_units(r) == 1.0 for r in QUANT_ROUNDING)
    case = RUNS[0]
    assert np.all(error_bound(case, np.zeros((2, 3)), np.zeros((2, 3)), rounding="fixed_point_half_away") == 1.0)
