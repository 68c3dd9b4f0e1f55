"""Name the bug class of a mismatch on a case with an epilogue (conv followed by constants/activations).

Each hypothesis is the float64 oracle under one wrong reading of the epilogue, the way a graph
optimizer or an importer gets it wrong:

* `epilogue_dropped`: the conv (with its bias) and nothing after it: a pass removed the epilogue.
* `epilogue_before_bias`: the epilogue applied to conv(x, w), the bias added after it: a fusion
  that puts the bias add at the end of the fused kernel.
* `epilogue_fold_wrong_axis`: the leading run of constant ops folded into the weights along the
  input-channel axis instead of the output-channel one (axis 0 of a transposed conv's
  (C_in, C_out/g, *k) weight, as if it were (C_out, ...); axis 1 of a conv's), the bias folded
  right. It shows only where that axis has the output channels' length (C_in == C_out).

`diagnose_epilogue` returns the first name whose output has the backend's shape and lies within
that alternative's bound, provided it differs from the canonical output.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from harness.model.case import Case
from harness.numerics.bound import UNIT_ROUNDOFF, error_bound
from harness.numerics.epilogue import channel_shape, leading_fold, wrong_axis
from harness.numerics.inputs import Inputs
from harness.numerics.oracle import reference

Alt = tuple[np.ndarray, np.ndarray]  # (output, bound), float64


def _judged(case: Case, result: tuple) -> Alt:
    ref, scale, *trace = result
    return ref, error_bound(case, ref, scale, trace=trace[0] if trace else None)


def epilogue_dropped(case: Case, inputs: Inputs) -> Iterator[Alt]:
    plain = dataclasses.replace(case, epilogue=())
    yield _judged(plain, reference(plain, inputs.x, inputs.w, inputs.b))


def epilogue_before_bias(case: Case, inputs: Inputs) -> Iterator[Alt]:
    if inputs.b is None:
        return
    unbiased = dataclasses.replace(case, bias=False)
    y, bound = _judged(unbiased, reference(unbiased, inputs.x, inputs.w, None, inputs.epilogue))
    b = np.asarray(inputs.b, dtype=np.float64)
    out = y + b.reshape(channel_shape(case, y.ndim))
    yield out, bound + UNIT_ROUNDOFF[case.dtype] * np.abs(out)


def epilogue_fold_wrong_axis(case: Case, inputs: Inputs) -> Iterator[Alt]:
    fold, axis = leading_fold(case, inputs.epilogue), wrong_axis(case)
    if fold is None or axis is None:
        return
    n, a, t = fold
    w = np.asarray(inputs.w, dtype=np.float64)
    shape = [1] * w.ndim
    shape[axis] = -1
    w_folded = w * a.reshape(shape)
    b = np.zeros(case.out_channels) if inputs.b is None else np.asarray(inputs.b, dtype=np.float64)
    rest = dataclasses.replace(case, bias=True, epilogue=case.epilogue[n:])
    out, bound = _judged(rest, reference(rest, inputs.x, w_folded, a * b + t, inputs.epilogue[n:]))
    yield out, 2.0 * bound + 2.0 * UNIT_ROUNDOFF[case.dtype] * np.abs(out)


HYPOTHESES = [epilogue_fold_wrong_axis, epilogue_before_bias, epilogue_dropped]


def diagnose_epilogue(case: Case, inputs: Inputs, out64: np.ndarray, canonical: Alt) -> str | None:
    """The hypothesis that reproduces `out64`, where the canonical output (with its bound) does not."""
    for hypothesis in HYPOTHESES:
        for ref, bound in hypothesis(case, inputs):
            if ref.shape != out64.shape:
                continue
            if ref.shape == canonical[0].shape and np.all(np.abs(ref - canonical[0]) <= canonical[1]):
                continue  # indistinguishable from the canonical output here: explains nothing
            if np.all(np.abs(out64 - ref) <= bound):
                return hypothesis.__name__
    return None
