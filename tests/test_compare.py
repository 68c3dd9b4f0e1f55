"""Comparator and bound: structure before values, exact integers, NaN, where errors sit."""

from __future__ import annotations

import numpy as np
import pytest

from harness.model.build import make_case
from harness.numerics.bound import error_bound, gamma
from harness.numerics.compare import compare
from harness.numerics.inputs import integer_amplitude, make_inputs
from harness.numerics.oracle import reference


def _setup(**kw):
    fields = dict(id="c", op="conv2d", in_channels=3, out_channels=4, input_size=[6, 7], kernel_size=3, padding=1)
    fields.update(kw)
    case = make_case(**fields)
    inputs = make_inputs(case)
    ref, scale = reference(case, inputs.x, inputs.w, inputs.b)
    return case, inputs, ref, scale


def test_rounded_reference_passes_and_bound_ratio_is_small():
    case, _, ref, scale = _setup()
    v = compare(case, ref.astype(np.float32), "float32", ref, scale)
    assert v.status == "pass" and 0 < v.bound_ratio < 1


def test_integers_bound_is_exactly_zero():
    case, _, ref, scale = _setup(data="integers")
    assert np.all(error_bound(case, ref, scale) == 0)
    out = ref.astype(np.float32)
    assert compare(case, out, "float32", ref, scale).status == "pass"
    out.reshape(-1)[5] += 1.0
    v = compare(case, out, "float32", ref, scale)
    assert v.status == "mismatch" and v.max_abs_err == 1.0 and v.where["bad"] == 1


def test_integer_amplitude_keeps_half_precision_exact():
    case, _, _, scale = _setup(data="integers", dtype="bfloat16")
    a = integer_amplitude(case)
    assert case.accumulation_length * a * a + a < 2**8
    assert float(scale.max()) <= 2**8


def test_bound_formula_float32():
    case, _, ref, scale = _setup()
    k = 3 * 9
    expected = gamma(k + 2, 2.0**-24) * scale
    assert np.allclose(error_bound(case, ref, scale), expected, rtol=1e-6)


def test_tf32_widens_the_bound():
    case, _, ref, scale = _setup()
    assert np.all(error_bound(case, ref, scale, tf32=True) > error_bound(case, ref, scale))


def test_shape_is_checked_before_values():
    case, _, ref, scale = _setup()
    v = compare(case, ref[..., :-1].astype(np.float32), "float32", ref, scale)
    assert v.status == "shape_mismatch" and "expected (1, 4, 6, 7)" in v.message


def test_dtype_is_checked():
    case, _, ref, scale = _setup()
    assert compare(case, ref, "float64", ref, scale).status == "mismatch"


def test_nan_is_a_mismatch_not_a_pass():
    case, _, ref, scale = _setup()
    out = ref.astype(np.float32)
    out[0, 1, 2, 3] = np.nan
    v = compare(case, out, "float32", ref, scale)
    assert v.status == "mismatch" and "NaN" in v.message and v.bound_ratio is None


def test_where_locates_a_zeroed_last_row():
    case, _, ref, scale = _setup(op="conv_transpose2d", stride=2, output_padding=1, data="integers")
    out = ref.astype(np.float32)
    out[:, :, -1, :] = 0
    v = compare(case, out, "float32", ref, scale)
    assert v.status == "mismatch"
    h = v.where["axes"]["H"]
    assert h["bad_indices"] == str(ref.shape[2] - 1)
    assert v.where["region"] == "border"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_rounding_to_dtype_passes(dtype):
    case, inputs, ref, scale = _setup(dtype=dtype, bias=True)
    out = ref.astype(inputs.x.dtype)
    assert compare(case, out, dtype, ref, scale).status == "pass"
