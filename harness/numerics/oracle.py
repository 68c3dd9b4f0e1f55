"""Float64 reference convolution in NumPy, one code path for 1-D, 2-D and 3-D.

A forward convolution is a window view of the padded input (`as_strided`) contracted
with the weights by `einsum`. A transposed convolution is rewritten as a forward one:
insert stride-1 zeros between inputs, pad by the dilated kernel reach, and convolve
with the flipped kernel whose in/out axes are swapped within each group. The same
function applied to |x|, |w|, |b| gives the scale that the error bound is built on.
"""

from __future__ import annotations

import string

import numpy as np
from numpy.lib.stride_tricks import as_strided

from harness.model.case import Case
from harness.numerics.epilogue import Constants, Trace, apply_epilogue

Pads = tuple[tuple[int, int], ...]


def _pad_or_crop(x: np.ndarray, pads: Pads, fill: float = 0) -> np.ndarray:
    """Pad spatial axes by positive amounts (with `fill`), crop by negative ones."""
    widths = [(0, 0), (0, 0)] + [(max(b, 0), max(a, 0)) for b, a in pads]
    if any(b or a for b, a in widths):
        x = np.pad(x, widths, constant_values=fill)
    crop = tuple(slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(pads, x.shape[2:]))
    return x[(slice(None), slice(None), *crop)]


def windows(
    x: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...],
    pads: Pads, groups: int, fill: float = 0,
) -> np.ndarray:
    """Read-only window view of the padded x (N, C, *L): (N, G, C/G, *out, *k); pads hold `fill`."""
    x = _pad_or_crop(x, pads, fill)
    n, c = x.shape[:2]
    rank = len(kernel)
    out = tuple((x.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(rank))
    st = x.strides
    return as_strided(
        x,
        shape=(n, groups, c // groups, *out, *kernel),
        strides=(st[0], st[1] * (c // groups), st[1],
                 *(st[2 + i] * stride[i] for i in range(rank)),
                 *(st[2 + i] * dilation[i] for i in range(rank))),
        writeable=False,
    )


def axis_letters(rank: int) -> tuple[str, str]:
    """einsum letters for the spatial axes of the output and of the kernel."""
    return string.ascii_lowercase[:rank], string.ascii_lowercase[10:10 + rank]


def conv_forward(
    x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], dilation: tuple[int, ...],
    pads: Pads, groups: int,
) -> np.ndarray:
    """Cross-correlation: x (N, C, *L), w (O, C/g, *k) -> (N, O, *out)."""
    o, k = w.shape[0], w.shape[2:]
    view = windows(x, k, stride, dilation, pads, groups)
    n, c = view.shape[0], view.shape[1] * view.shape[2]
    wg = w.reshape(groups, o // groups, c // groups, *k)
    sp, kk = axis_letters(len(k))
    y = np.einsum(f"NGC{sp}{kk},GOC{kk}->NGO{sp}", view, wg, optimize=True)
    return y.reshape(n, o, *view.shape[3:3 + len(k)])


def conv_transpose_forward(
    x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], dilation: tuple[int, ...],
    pads: Pads, extend: tuple[int, ...], groups: int,
) -> np.ndarray:
    """Transposed conv: x (N, C, *L), w (C, O/g, *k) -> (N, O, *out); the full output extended
    by `extend` at the end, then `pads` cropped (Geometry's convention)."""
    up, wf, crop = transpose_operands(x, w, stride, dilation, pads, extend, groups)
    return conv_forward(up, wf, (1,) * len(wf.shape[2:]), dilation, crop, groups)


def transpose_operands(
    x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], dilation: tuple[int, ...],
    pads: Pads, extend: tuple[int, ...], groups: int, fill: float = 0,
) -> tuple[np.ndarray, np.ndarray, Pads]:
    """The forward convolution (stride 1) that equals a transposed one: x with stride-1 copies of
    `fill` inserted between its elements, the flipped kernel with in/out swapped within each group
    (O, C/g, *k), and the pads (negative: crops) that the dilated kernel reach, `pads` and `extend` give."""
    n, c, *length = x.shape
    up = np.full((n, c, *((m - 1) * s + 1 for m, s in zip(length, stride))), fill, dtype=x.dtype)
    up[(slice(None), slice(None), *(slice(None, None, s) for s in stride))] = x
    cin, og, *k = w.shape
    g = groups
    wf = w.reshape(g, cin // g, og, *k).swapaxes(1, 2).reshape(g * og, cin // g, *k)
    wf = wf[(slice(None), slice(None), *(slice(None, None, -1),) * len(k))]
    reach = [d * (kk - 1) for d, kk in zip(dilation, k)]
    crop = tuple((r - pb, r - pa + e) for r, (pb, pa), e in zip(reach, pads, extend))
    return up, wf, crop


def _transpose_as_forward(x: np.ndarray, w: np.ndarray, case: Case) -> np.ndarray:
    geo = case.geometry
    assert geo is not None
    return conv_transpose_forward(x, w, case.stride, case.dilation, geo.pads, geo.extend, case.groups)


def convolve(case: Case, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """The case's convolution of channels-first float64 arrays, bias added: (N, C_out, *out)."""
    geo = case.geometry
    assert geo is not None, f"{case.id}: the oracle has no answer for an invalid case"
    if case.transpose:
        y = _transpose_as_forward(x, w, case)
    else:
        y = conv_forward(x, w, case.stride, case.dilation, geo.pads, case.groups)
    if b is not None:
        y += b.reshape(1, -1, *(1,) * case.rank)
    return y


def reference(case: Case, x: np.ndarray, w: np.ndarray, b: np.ndarray | None,
              epilogue: tuple[Constants, ...] = ()) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, Trace]:
    """(output, scale) in float64 and in the case's layout; scale = |x| (*) |w| + |b|.

    With an epilogue (its constants given): (output, scale, trace), the output after the
    epilogue, the scale still the conv's, and the trace of each step for the bound. An unbatched case's
    x and output have no batch axis: it is computed as batch 1."""
    x64 = np.asarray(x, dtype=np.float64)
    if case.unbatched:
        x64 = x64[None]
    if case.channels_last:
        x64 = np.moveaxis(x64, -1, 1)
    w64 = np.asarray(w, dtype=np.float64)
    b64 = None if b is None else np.asarray(b, dtype=np.float64)
    ref = convolve(case, x64, w64, b64)
    scale = convolve(case, np.abs(x64), np.abs(w64), None if b64 is None else np.abs(b64))
    if case.channels_last:
        ref, scale = np.moveaxis(ref, 1, -1), np.moveaxis(scale, 1, -1)
    if case.unbatched:
        ref, scale = ref[0], scale[0]
    ref, scale = np.ascontiguousarray(ref), np.ascontiguousarray(scale)
    if case.epilogue and epilogue:
        out, trace = apply_epilogue(case, ref, epilogue)
        return out, scale, trace
    return ref, scale
