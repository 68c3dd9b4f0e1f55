"""The quantized bug classes as mutants: the exact integer convolution with one classic int8 mistake.

No framework computes these: each mutant is the harness's exact accumulation (numerics/quant.py)
with the mistake put in, so `convdiff selftest` proves the judge catches the class and the
diagnosis names it. `quant_int16_pair_saturation` sums u8 x s8 products in int16 pairs (the
`vpmaddubsw` path of CPUs without VNNI); `quant_ignored_zero_point` treats x's zero point as 0;
`quant_per_tensor_scale` requantizes every channel with the first channel's weight scale.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from backends.base import Output
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.quant import STORAGE, accumulate, requantize, saturated_accumulator

QUANT_MUTANTS = ("quant_int16_pair_saturation", "quant_ignored_zero_point", "quant_per_tensor_scale")


def run_quant_mutant(bug: str, case: Case, inputs: Inputs) -> Output:
    """The quantized output with `bug` where it can show, else the exact one."""
    p = inputs.quant
    assert p is not None and case.geometry is not None
    x = np.moveaxis(inputs.x, -1, 1) if case.channels_last else inputs.x
    note = "exact integer convolution"
    if bug == "quant_int16_pair_saturation" and case.dtype == "uint8" and not case.transpose and not p.w_zero_point:
        acc, note = saturated_accumulator(case, x, inputs.w, inputs.b, p), "u8*s8 pairs summed in saturating int16"
    elif bug == "quant_ignored_zero_point":
        acc, note = accumulate(case, x, inputs.w, inputs.b, 0, p.w_zero_point), "x_zero_point taken as 0"
    else:
        acc = accumulate(case, x, inputs.w, inputs.b, p.x_zero_point, p.w_zero_point)
    if bug == "quant_per_tensor_scale":
        p, note = dataclasses.replace(p, w_scale=np.full_like(p.w_scale, p.w_scale[0])), "w_scale[0] for every channel"
    y = requantize(case, acc, p)
    if case.channels_last:
        y = np.moveaxis(y, 1, -1)
    return Output(np.ascontiguousarray(y).astype(STORAGE[case.dtype]), case.dtype,
                  f"# mutant:{bug}: {note} (a simulation, no framework)")
