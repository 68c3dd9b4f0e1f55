"""The float64 oracle against independent truths: direct summation, PyTorch float64, the adjoint identity."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from harness.model.build import make_case
from harness.model.case import Case
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference

from .helpers import run_on


# ---- brute-force definitions, written from the formulas in ARCHITECTURE.md ----------
def explicit_pads(case: Case) -> tuple[list[tuple[int, int]], list[int]]:
    """(pads, tail extension) derived here, independently of harness.model.case.resolve_geometry."""
    pads, ext = [], []
    for i in range(case.rank):
        n, k, s, d = case.input_size[i], case.kernel_size[i], case.stride[i], case.dilation[i]
        reach = d * (k - 1) + 1
        if case.padding == "valid":
            pads.append((0, 0))
            ext.append(0)
        elif case.padding == "same" and not case.transpose:
            total = max((math.ceil(n / s) - 1) * s + reach - n, 0)
            pads.append((total // 2, total - total // 2))
            ext.append(0)
        elif case.padding == "same":
            full = (n - 1) * s + reach
            if full >= n * s:
                crop = full - n * s
                pads.append((crop // 2, crop - crop // 2))
                ext.append(0)
            else:
                pads.append((0, 0))
                ext.append(n * s - full)
        else:
            pads.append(case.padding[i])
            ext.append(case.output_padding[i] if case.transpose else 0)
    return pads, ext


def brute_force(case: Case, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """Direct summation over every output (conv) or every input (transposed conv) element."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    if case.channels_last:
        x = np.moveaxis(x, -1, 1)
    pads, ext = explicit_pads(case)
    n_, c_ = x.shape[:2]
    g = case.groups
    ks, ss, ds = case.kernel_size, case.stride, case.dilation
    if not case.transpose:
        o_ = w.shape[0]
        out = [(x.shape[2 + i] + pads[i][0] + pads[i][1] - ds[i] * (ks[i] - 1) - 1) // ss[i] + 1 for i in range(case.rank)]
        y = np.zeros((n_, o_, *out))
        cg, og = c_ // g, o_ // g
        for n, o, *pos in itertools.product(range(n_), range(o_), *map(range, out)):
            acc = 0.0
            for c in range(cg):
                for kk in itertools.product(*map(range, ks)):
                    src = [pos[i] * ss[i] + kk[i] * ds[i] - pads[i][0] for i in range(case.rank)]
                    if all(0 <= src[i] < x.shape[2 + i] for i in range(case.rank)):
                        acc += x[(n, (o // og) * cg + c, *src)] * w[(o, c, *kk)]
            y[(n, o, *pos)] = acc
    else:
        og = w.shape[1]
        cg = c_ // g
        full = [(x.shape[2 + i] - 1) * ss[i] + ds[i] * (ks[i] - 1) + 1 + ext[i] for i in range(case.rank)]
        y = np.zeros((n_, og * g, *full))
        for n, c, *pos in itertools.product(range(n_), range(c_), *map(range, x.shape[2:])):
            for oc in range(og):
                for kk in itertools.product(*map(range, ks)):
                    dst = [pos[i] * ss[i] + kk[i] * ds[i] for i in range(case.rank)]
                    y[(n, (c // cg) * og + oc, *dst)] += x[(n, c, *pos)] * w[(c, oc, *kk)]
        y = y[(slice(None), slice(None), *(slice(pb, f - pa) for (pb, pa), f in zip(pads, full)))]
    if b is not None:
        y = y + np.asarray(b, np.float64).reshape(1, -1, *(1,) * case.rank)
    return np.moveaxis(y, 1, -1) if case.channels_last else y


# ---- random small configurations ---------------------------------------------------
def random_case(rng: random.Random, i: int, dtype: str = "float64") -> Case:
    """A random valid small case; retried until the loader accepts it."""
    while True:
        rank = rng.choice((1, 2, 3))
        transpose = rng.random() < 0.5
        groups = rng.choice((1, 1, 2, 3))
        size = {1: (3, 9), 2: (2, 6), 3: (2, 4)}[rank]

        def per(lo: int, hi: int, rank: int = rank) -> list[int]:
            return [rng.randint(lo, hi) for _ in range(rank)]

        fields = dict(
            id=f"r{i}", op=f"{'conv_transpose' if transpose else 'conv'}{rank}d", batch=rng.choice((1, 2)),
            in_channels=groups * rng.randint(1, 2), out_channels=groups * rng.randint(1, 2), groups=groups,
            input_size=per(*size), kernel_size=per(1, 3 if rank < 3 else 2), stride=per(1, 3),
            dilation=per(1, 2), bias=rng.random() < 0.5, dtype=dtype, seed=i,
            layout=rng.choice(("channels_first", "channels_last")),
        )
        form = rng.choice(("int", "pairs", "same", "valid"))
        if form == "int":
            fields["padding"] = rng.randint(0, 2)
        elif form == "pairs":
            fields["padding"] = [[rng.randint(0, 2), rng.randint(0, 2)] for _ in range(rank)]
        else:
            fields["padding"] = form
        if transpose and form in ("int", "pairs"):
            fields["output_padding"] = [rng.randint(0, max(s, d) - 1) for s, d in zip(fields["stride"], fields["dilation"])]
        try:
            return make_case(**fields)
        except ValueError:
            continue


RANDOM_CASES = [random_case(random.Random(1000 + i), i) for i in range(240)]


def test_random_configurations_cover_the_space():
    kinds = {(c.rank, c.transpose, c.padding if isinstance(c.padding, str) else "explicit") for c in RANDOM_CASES}
    assert len(kinds) == 3 * 2 * 3
    assert any(c.groups > 1 and c.transpose for c in RANDOM_CASES)
    assert any(any(c.output_padding) for c in RANDOM_CASES)


@pytest.mark.parametrize("case", RANDOM_CASES, ids=lambda c: f"{c.id}-{c.op}")
def test_oracle_matches_direct_summation(case):
    inputs = make_inputs(case)
    ref, scale = reference(case, inputs.x, inputs.w, inputs.b)
    expected = brute_force(case, inputs.x, inputs.w, inputs.b)
    assert ref.shape == expected.shape == case.output_shape
    np.testing.assert_allclose(ref, expected, rtol=1e-12, atol=1e-12)
    absolute = brute_force(case, np.abs(inputs.x), np.abs(inputs.w), None if inputs.b is None else np.abs(inputs.b))
    np.testing.assert_allclose(scale, absolute, rtol=1e-12, atol=1e-12)


def test_oracle_matches_torch_float64():
    """Every random configuration through the real torch backend, float64: relative error <= 1e-12."""
    records = run_on(RANDOM_CASES, ["torch"])
    assert len(records) == len(RANDOM_CASES)
    worst = max(records, key=lambda r: r.rel_err or 0.0)
    assert all(r.status == "pass" for r in records), [(r.case_id, r.status, r.message) for r in records if r.status != "pass"]
    assert worst.rel_err <= 1e-12, (worst.case_id, worst.rel_err)


@pytest.mark.parametrize("seed", range(40))
def test_adjoint_identity(seed):
    """<conv(x, w), g> == <x, conv_transpose(g, w)> with the same stride, padding, dilation, groups."""
    rng = random.Random(seed)
    while True:
        conv = random_case(rng, seed)
        if conv.transpose or isinstance(conv.padding, str):
            continue
        out = conv.geometry.out_size
        reach = [d * (k - 1) for d, k in zip(conv.dilation, conv.kernel_size)]
        op = [n - ((m - 1) * s - pb - pa + r + 1) for n, m, s, (pb, pa), r
              in zip(conv.input_size, out, conv.stride, conv.padding, reach)]
        if all(0 <= p < max(s, d) for p, s, d in zip(op, conv.stride, conv.dilation)):
            break
    x, w = make_inputs(conv).x, make_inputs(conv).w
    tconv = make_case(id="t", op=conv.op.replace("conv", "conv_transpose"), batch=conv.batch,
                      in_channels=conv.out_channels, out_channels=conv.in_channels, groups=conv.groups,
                      input_size=list(out), kernel_size=list(conv.kernel_size), stride=list(conv.stride),
                      dilation=list(conv.dilation), padding=[list(p) for p in conv.padding], output_padding=op,
                      layout=conv.layout, dtype="float64")
    g = np.random.default_rng(seed).standard_normal(conv.output_shape)
    y, _ = reference(conv, x, w, None)
    xt, _ = reference(tconv, g, w, None)
    assert xt.shape == x.shape
    lhs, rhs = float(np.sum(y * g)), float(np.sum(np.asarray(x, np.float64) * xt))
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-10)


def test_domain_seed_output_padding_row_is_not_zero():
    """DOMAIN.md class 2: the output_padding row of this configuration holds real values."""
    case = make_case(id="s", op="conv_transpose2d", in_channels=1, out_channels=1, input_size=[2, 3], kernel_size=2,
                     stride=[2, 1], padding=1, output_padding=[1, 0], data="integers", dtype="float64")
    x = np.arange(1, 7, dtype=np.float64).reshape(1, 1, 2, 3)
    w = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    ref, _ = reference(case, x, w, None)
    # Hand-derived: full output row 3 = x row 1 times kernel row 1 -> [3*4+4*5... ] cropped by 1 column each side.
    assert ref.shape == (1, 1, 3, 2)
    assert ref[0, 0, 2].tolist() == [3 * 5 + 4 * 4, 3 * 6 + 4 * 5]
