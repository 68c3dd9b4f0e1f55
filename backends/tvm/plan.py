"""The `tvm` backend's decisions, pure (no TVM import): layouts and the Relax call for a case.

Shared by the adapter, its gradients and its reproducer, so they cannot drift; its source is
part of every TVM cache key (tvm_backend.PLAN_MODULES).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.pads import explicit_pads, flat_pads
from harness.model.case import Case

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def data_layout(case: Case) -> str:
    """NCW/NCHW/NCDHW, or NWC/NHWC/NDHWC for channels_last."""
    s = SPATIAL[case.rank]
    return f"N{s}C" if case.channels_last else f"NC{s}"


def canonical_kernel_layout(case: Case) -> str:
    """The layout of harness weights: conv (O, I/g, *k), transpose (I, O/g, *k)."""
    s = SPATIAL[case.rank]
    return f"IO{s}" if case.transpose else f"OI{s}"


def kernel_layout(case: Case) -> str:
    """Kernel layout declared to TVM: canonical for channels_first; *k first for channels_last
    (HWIO for conv as TVM's NHWC schedules expect; HWOI for transpose, TF's filter order)."""
    if not case.channels_last:
        return canonical_kernel_layout(case)
    s = SPATIAL[case.rank]
    return f"{s}OI" if case.transpose else f"{s}IO"


def relayout(w: np.ndarray, src: str, dst: str) -> np.ndarray:
    """Permute a weight from layout string `src` to `dst`; an invalid case's weight of another rank has no such
    permutation and is given as it is."""
    if w.ndim != len(src):
        return w
    return np.ascontiguousarray(np.transpose(w, [src.index(c) for c in dst]))


OP_FN = {"conv": "conv{r}d", "conv_transpose": "conv{r}d_transpose"}


def direct_plan(case: Case) -> tuple[str, dict[str, Any], tuple[int, ...], tuple[int, ...], list[str], list[str]]:
    """The `tvm` backend's decisions, pure (no TVM import): shared with its repro script so they cannot drift.

    Returns the relax.op.nn function name, its kwargs, the weight shape in the declared
    kernel layout, the bias reshape (channels_first), the translation lines and the notes.
    """
    pads, out_pad = explicit_pads(case)
    dl, kl = data_layout(case), kernel_layout(case)
    fn_name = OP_FN[case.family].format(r=case.rank)
    kw: dict[str, Any] = {"strides": case.stride, "padding": flat_pads(pads), "dilation": case.dilation,
                          "groups": case.groups, "data_layout": dl, "kernel_layout": kl}
    if case.transpose:
        kw = {**kw, "output_padding": out_pad}
    notes: list[str] = []
    if isinstance(case.padding, str):
        notes.append(f"padding '{case.padding}' given as its explicit (before, after) pairs")
        if case.transpose and any(out_pad):
            notes.append("transposed SAME tail (kernel shorter than stride) given as output_padding")
    w_shape = case.weight_shape if len(case.weight_shape) != len(kl) else \
        tuple(case.weight_shape[canonical_kernel_layout(case).index(c)] for c in kl)
    out_c = case.out_channels
    bshape = (out_c,) if case.channels_last else (1, out_c, *([1] * case.rank))
    lines = [f"x: R.Tensor({case.input_shape}, {case.dtype!r}); w: R.Tensor({w_shape})  # w in {kl}"]
    if kl != canonical_kernel_layout(case):
        lines.insert(0, f"w = np.transpose(w, {[canonical_kernel_layout(case).index(c) for c in kl]})  # -> {kl}")
    lines.append(f"y = relax.op.nn.{fn_name}(x, w, " + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")")
    if case.bias:
        lines.append("y = relax.op.add(y, b)" if case.channels_last else f"y = relax.op.add(y, relax.op.reshape(b, {bshape}))")
    return fn_name, kw, w_shape, bshape, lines, notes
