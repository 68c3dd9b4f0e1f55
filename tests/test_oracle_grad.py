"""The float64 gradient oracle against independent truths: direct summation over every product
term, the adjoint identity, and PyTorch float64 autograd (through the isolated worker)."""

from __future__ import annotations

import dataclasses
import itertools
import random

import numpy as np
import pytest

from harness.model.build import make_case
from harness.model.case import Case
from harness.numerics.bound import accumulation_length
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference
from harness.numerics.oracle_grad import gradient_reference, gradients, unreached

from .helpers import run_on
from .test_oracle import explicit_pads, random_case


def terms(case: Case, x_shape: tuple[int, ...]):
    """Every product x[xi] * w[wi] that lands in y[yi] (channels first), from the definitions alone."""
    pads, _ = explicit_pads(case)
    n_, c_ = x_shape[:2]
    g, ks, ss, ds, r = case.groups, case.kernel_size, case.stride, case.dilation, case.rank
    if not case.transpose:
        o_ = case.out_channels
        out = case.geometry.out_size
        cg, og = c_ // g, o_ // g
        for n, o, *pos in itertools.product(range(n_), range(o_), *map(range, out)):
            for c, kk in itertools.product(range(cg), itertools.product(*map(range, ks))):
                src = [pos[i] * ss[i] + kk[i] * ds[i] - pads[i][0] for i in range(r)]
                if all(0 <= src[i] < x_shape[2 + i] for i in range(r)):
                    yield (n, (o // og) * cg + c, *src), (o, c, *kk), (n, o, *pos)
    else:
        og, cg = case.out_channels // g, c_ // g
        out = case.geometry.out_size
        for n, c, *pos in itertools.product(range(n_), range(c_), *map(range, x_shape[2:])):
            for oc, kk in itertools.product(range(og), itertools.product(*map(range, ks))):
                dst = [pos[i] * ss[i] + kk[i] * ds[i] - pads[i][0] for i in range(r)]
                if all(0 <= dst[i] < out[i] for i in range(r)):
                    yield (n, c, *pos), (c, oc, *kk), (n, (c // cg) * og + oc, *dst)


def brute_gradients(case: Case, x: np.ndarray, w: np.ndarray, dy: np.ndarray) -> dict[str, np.ndarray]:
    x, w, dy = (np.asarray(a, np.float64) for a in (x, w, dy))
    if case.channels_last:
        x, dy = np.moveaxis(x, -1, 1), np.moveaxis(dy, -1, 1)
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for xi, wi, yi in terms(case, x.shape):
        gx[xi] += dy[yi] * w[wi]
        gw[wi] += x[xi] * dy[yi]
    gb = dy.sum(axis=(0, *range(2, dy.ndim)))
    return {"grad_input": np.moveaxis(gx, 1, -1) if case.channels_last else gx, "grad_weight": gw, "grad_bias": gb}


def grad_case(rng: random.Random, i: int, dtype: str = "float64") -> Case:
    return dataclasses.replace(random_case(rng, i, dtype), gradients=True)


RANDOM = [grad_case(random.Random(7000 + i), i) for i in range(120)]


@pytest.mark.parametrize("case", RANDOM[:80], ids=lambda c: f"{c.id}-{c.op}")
def test_gradients_match_direct_summation(case):
    inputs = make_inputs(case)
    got = gradients(case, inputs.x, inputs.w, inputs.dy)
    want = brute_gradients(case, inputs.x, inputs.w, inputs.dy)
    absolute = brute_gradients(case, np.abs(inputs.x), np.abs(inputs.w), np.abs(inputs.dy))
    refs = gradient_reference(case, inputs)
    for name in case.gradient_outputs:
        assert got[name].shape == want[name].shape
        np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(refs[name][1], absolute[name], rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", range(40))
def test_adjoint_identity(seed):
    """<dy, J dx> = <J^T dy, dx> in x and in w, J the forward op's linear map (bias off)."""
    case = RANDOM[seed]
    inputs = make_inputs(case)
    rng = np.random.default_rng(seed)
    dx, dw = rng.standard_normal(inputs.x.shape), rng.standard_normal(inputs.w.shape)
    g = gradients(case, inputs.x, inputs.w, inputs.dy)
    dy = np.asarray(inputs.dy, np.float64)
    jx, _ = reference(case, dx, inputs.w, None)
    jw, _ = reference(case, inputs.x, dw, None)
    assert float(np.sum(dy * jx)) == pytest.approx(float(np.sum(g["grad_input"] * dx)), rel=1e-10, abs=1e-10)
    assert float(np.sum(dy * jw)) == pytest.approx(float(np.sum(g["grad_weight"] * dw)), rel=1e-10, abs=1e-10)


def test_random_configurations_cover_the_space():
    assert {(c.rank, c.transpose) for c in RANDOM} == {(r, t) for r in (1, 2, 3) for t in (False, True)}
    assert any(any(unreached(c)) for c in RANDOM)
    assert any(c.groups > 1 for c in RANDOM) and any(c.channels_last for c in RANDOM)
    assert any(any(c.output_padding) for c in RANDOM) and any(c.bias for c in RANDOM)


def test_gradients_match_torch_float64_autograd():
    """Every random configuration through torch.autograd in its worker: each gradient within 1e-12."""
    records = run_on(RANDOM, ["torch"])
    grads = [r for r in records if r.output != "out"]
    assert len(grads) == sum(len(c.gradient_outputs) for c in RANDOM)
    bad = [(r.case_id, r.output, r.status, r.message) for r in grads if r.status != "pass"]
    assert not bad, bad
    assert max(r.rel_err or 0.0 for r in grads) <= 1e-12


def test_unreached_rows_get_zero_input_gradient():
    """Hand-derived: conv1d L=5, k=2, s=2, no padding: windows cover 0..3, x[4] gets nothing."""
    case = make_case(id="u", op="conv1d", in_channels=1, out_channels=1, input_size=5, kernel_size=2,
                     stride=2, gradients=True, dtype="float64")
    assert unreached(case) == (1,)
    x = np.arange(5.0).reshape(1, 1, 5)
    w = np.array([[[2.0, 3.0]]])
    dy = np.array([[[1.0, 10.0]]])
    g = gradients(case, x, w, dy)
    assert g["grad_input"][0, 0].tolist() == [2.0, 3.0, 20.0, 30.0, 0.0]
    assert g["grad_weight"][0, 0].tolist() == [0 * 1 + 2 * 10, 1 * 1 + 3 * 10]
    assert g["grad_bias"].tolist() == [11.0]


def test_accumulation_lengths():
    """grad_input: C_out/g * prod(k); grad_weight: N * prod(out) (conv), N * prod(in) (transpose)."""
    conv = make_case(id="a", op="conv2d", batch=3, in_channels=4, out_channels=6, groups=2, input_size=[7, 8],
                     kernel_size=[3, 2], stride=2, gradients=True, bias=True)
    assert conv.geometry.out_size == (3, 4)
    assert accumulation_length(conv, "out") == 2 * 3 * 2
    assert accumulation_length(conv, "grad_input") == 3 * 3 * 2
    assert accumulation_length(conv, "grad_weight") == 3 * 3 * 4
    assert accumulation_length(conv, "grad_bias") == 3 * 3 * 4
    tconv = make_case(id="b", op="conv_transpose1d", batch=2, in_channels=4, out_channels=6, input_size=5,
                      kernel_size=3, stride=2, gradients=True)
    assert accumulation_length(tconv, "grad_weight") == 2 * 5
    assert accumulation_length(tconv, "grad_input") == 6 * 3


def test_dy_is_drawn_after_the_forward_inputs():
    case = make_case(id="d", op="conv2d", in_channels=2, out_channels=3, input_size=5, kernel_size=3, bias=True,
                     layout="channels_last")
    plain, grad = make_inputs(case), make_inputs(dataclasses.replace(case, gradients=True))
    assert plain.dy is None and grad.dy.shape == case.output_shape and grad.dy.dtype == grad.x.dtype
    for a, b in ((plain.x, grad.x), (plain.w, grad.w), (plain.b, grad.b)):
        np.testing.assert_array_equal(a, b)
