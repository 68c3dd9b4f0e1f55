"""Float64 reference gradients, one code path for 1-D, 2-D and 3-D, no framework.

For y = op(x, w) + b and an upstream gradient dy (shape of y):

* conv: `grad_input` is the adjoint of the convolution in x, i.e. a transposed convolution
  of dy with the same stride, dilation, pads and groups: the adjoint of the window gather,
  dy scattered back through each kernel tap into the padded input, pads then cropped. The
  padded rows after the last window (`L + pb + pa - F`, F the extent the windows cover,
  the transposed conv's output_padding) get a zero gradient. (Per tap rather than a
  window view: a view over the upsampled dy would cost C_out * |x| * prod(k) memory.)
  `grad_weight` contracts the forward's window view of the padded x with dy over the
  batch and every output position, per group.
* conv_transpose: the full output is extended by `extend` and cropped by `pads`, so its
  adjoint pads dy by `pb` before and `pa - extend` after (a negative amount crops the
  extension, where no input contributed), then runs a forward convolution with w read as
  a conv weight `(C_in, C_out/g, *k)`. `grad_weight` contracts the window view of that
  padded dy with x over the batch and every input position.
* `grad_bias` sums dy over the batch and space.

The contractions reuse `oracle.windows` / `conv_forward`;
the same functions on |x|, |w|, |dy| give the scale of each gradient's error bound.
"""

from __future__ import annotations

import numpy as np

from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.oracle import Pads, axis_letters, conv_forward, windows

Grads = dict[str, np.ndarray]


def unreached(case: Case) -> tuple[int, ...]:
    """Per dim of a conv: padded input rows after the last window (`L + pb + pa - F`). grad_input,
    as a transposed conv of dy, needs them as its output_padding; 0 for a transposed op."""
    geo = case.geometry
    assert geo is not None
    if case.transpose:
        return (0,) * case.rank
    reach = [d * (k - 1) + 1 for d, k in zip(case.dilation, case.kernel_size)]
    covered = [(m - 1) * s + r for m, s, r in zip(geo.out_size, case.stride, reach)]
    return tuple(n + pb + pa - f for n, (pb, pa), f in zip(case.input_size, geo.pads, covered))


def _scatter(dy: np.ndarray, w: np.ndarray, case: Case, pads: Pads) -> np.ndarray:
    """The adjoint of the window gather: dy (N, O, *out) sent back through each kernel tap into
    the padded input, then the pads cropped. One tap at a time, so memory stays O(size of x)."""
    g, n, o = case.groups, dy.shape[0], dy.shape[1]
    cg = w.shape[1]
    padded = [m + pb + pa for m, (pb, pa) in zip(case.input_size, pads)]
    gx = np.zeros((n, g, cg, *padded))
    dyg, wg = dy.reshape(n, g, o // g, *dy.shape[2:]), w.reshape(g, o // g, cg, *case.kernel_size)
    for tap in np.ndindex(*case.kernel_size):
        win = tuple(slice(t * d, t * d + (m - 1) * s + 1, s)
                    for t, d, m, s in zip(tap, case.dilation, dy.shape[2:], case.stride))
        gx[(slice(None),) * 3 + win] += np.einsum("ngo...,goc->ngc...", dyg, wg[(Ellipsis, *tap)], optimize=True)
    crop = tuple(slice(pb, m - pa) for (pb, pa), m in zip(pads, padded))
    return gx.reshape(n, g * cg, *padded)[(slice(None), slice(None), *crop)]


def _conv_grads(case: Case, x: np.ndarray, w: np.ndarray, dy: np.ndarray) -> Grads:
    geo, g = case.geometry, case.groups
    assert geo is not None
    dx = _scatter(dy, w, case, geo.pads)  # rows no window reached (unreached()) stay zero
    view = windows(x, case.kernel_size, case.stride, case.dilation, geo.pads, g)
    n, o = dy.shape[:2]
    sp, kk = axis_letters(case.rank)
    dyg = dy.reshape(n, g, o // g, *dy.shape[2:])
    dw = np.einsum(f"NGC{sp}{kk},NGO{sp}->GOC{kk}", view, dyg, optimize=True)
    return {"grad_input": dx, "grad_weight": dw.reshape(w.shape)}


def _transpose_grads(case: Case, x: np.ndarray, w: np.ndarray, dy: np.ndarray) -> Grads:
    geo, g = case.geometry, case.groups
    assert geo is not None
    pads: Pads = tuple((pb, pa - e) for (pb, pa), e in zip(geo.pads, geo.extend))
    dx = conv_forward(dy, w, case.stride, case.dilation, pads, g)
    view = windows(dy, case.kernel_size, case.stride, case.dilation, pads, g)
    n, c = x.shape[:2]
    sp, kk = axis_letters(case.rank)
    xg = x.reshape(n, g, c // g, *x.shape[2:])
    dw = np.einsum(f"NGO{sp}{kk},NGC{sp}->GCO{kk}", view, xg, optimize=True)
    return {"grad_input": dx, "grad_weight": dw.reshape(w.shape)}


def _grads(case: Case, x: np.ndarray, w: np.ndarray, dy: np.ndarray) -> Grads:
    grads = (_transpose_grads if case.transpose else _conv_grads)(case, x, w, dy)
    grads["grad_bias"] = dy.sum(axis=(0, *range(2, dy.ndim)))
    return grads


def _channels_first(case: Case, a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return np.moveaxis(a, -1, 1) if case.channels_last else a


def gradients(case: Case, x: np.ndarray, w: np.ndarray, dy: np.ndarray) -> Grads:
    """Float64 grad_input (case layout), grad_weight (canonical layout) and grad_bias."""
    grads = _grads(case, _channels_first(case, x), np.asarray(w, np.float64), _channels_first(case, dy))
    if case.channels_last:
        grads["grad_input"] = np.moveaxis(grads["grad_input"], 1, -1)
    return {k: np.ascontiguousarray(v) for k, v in grads.items()}


def gradient_reference(case: Case, inputs: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{output: (reference, scale)} for each of `case.gradient_outputs`; scale is the same
    gradient computed on |x|, |w|, |dy| (what the error bound is built on)."""
    assert case.geometry is not None and inputs.dy is not None, f"{case.id}: no gradients to judge"
    ref = gradients(case, inputs.x, inputs.w, inputs.dy)
    scale = gradients(case, np.abs(inputs.x), np.abs(inputs.w), np.abs(inputs.dy))
    return {k: (ref[k], scale[k]) for k in case.gradient_outputs}
