"""Inputs are a pure function of the case: same seed, same data; exact in the case dtype."""

from __future__ import annotations

import numpy as np

from harness.model.build import make_case
from harness.model.validity import default_seed
from harness.numerics.inputs import make_inputs


def test_same_seed_same_data_and_layout_independent():
    a = make_case(id="a", op="conv2d", in_channels=2, out_channels=3, input_size=5, kernel_size=3, seed=7)
    b = make_case(id="b", op="conv2d", in_channels=2, out_channels=3, input_size=5, kernel_size=3, seed=7,
                  layout="channels_last")
    ia, ib = make_inputs(a), make_inputs(b)
    assert np.array_equal(ia.x, np.moveaxis(ib.x, -1, 1)) and np.array_equal(ia.w, ib.w)
    assert np.array_equal(make_inputs(a).x, ia.x)


def test_default_seed_is_derived_from_the_id():
    c = make_case(id="abc", op="conv1d", in_channels=1, out_channels=1, input_size=5, kernel_size=3)
    assert c.seed == default_seed("abc") != default_seed("abd")


def test_dtypes_and_integers():
    for dtype in ("float32", "float64", "float16", "bfloat16"):
        c = make_case(id="d", op="conv1d", in_channels=2, out_channels=2, input_size=5, kernel_size=3,
                      dtype=dtype, data="integers", bias=True)
        i = make_inputs(c)
        assert i.x.dtype.name == dtype and i.w.dtype.name == dtype and i.b.dtype.name == dtype
        vals = np.asarray(i.x, np.float64)
        assert np.array_equal(vals, np.round(vals)) and np.abs(vals).max() <= 3
