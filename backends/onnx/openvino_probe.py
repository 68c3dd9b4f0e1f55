"""Whether OpenVINO's int8 convolution saturates u8 x s8 pair sums at int16: a live probe for a host fact.

oneDNN inside OpenVINO's CPU plugin picks its int8 kernel from CPUID capped by ONEDNN_MAX_CPU_ISA;
without VNNI it multiplies u8 x s8 with vpmaddubsw, which adds two products into a saturating int16.
The kernel's name does not tell (`brgconv_avx512_I8` with and without VNNI), so the probe computes:
a 1x1 QDQ conv of four inputs 255 with four weights 127 (scales 1, zero points 0, y_scale 1000).
Exact: 4 * 255 * 127 = 129540 -> y = 130. Pair sums clamped to 32767: 2 * 32767 = 65534 -> y = 66.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from backends.onnx.model import node_attributes
from backends.onnx.qmodel import build_quant_model
from harness.model.build import make_case
from harness.model.case import Case
from harness.numerics.inputs import Inputs, make_inputs

EXACT, SATURATED = 130, 66


def probe() -> tuple[Case, Inputs]:
    """The probe's case (a 1x1 uint8 conv2d, 4 -> 1 channels, pinned scales) and its inputs (255s, 127s)."""
    case = make_case(id="int8_probe", op="conv2d", in_channels=4, out_channels=1, input_size=1, kernel_size=1,
                     bias=False, dtype="uint8", quant={"x_scale": 1.0, "x_zero_point": 0, "w_scale": 1.0,
                                                       "y_scale": 1000.0, "y_zero_point": 0})
    drawn = make_inputs(case)
    return case, dataclasses.replace(drawn, x=np.full_like(drawn.x, 255), w=np.full_like(drawn.w, 127))


def int8_pair_sums(compile_model: Callable[[bytes], Any]) -> str:
    """'exact', 'int16-saturated', 'y=<value>' (neither) or 'rejected (<reason>)'."""
    case, inputs = probe()
    try:
        compiled = compile_model(build_quant_model(case, inputs, node_attributes(case)[0], "qdq").SerializeToString())
        y = int(np.asarray(compiled({"x": inputs.x})[compiled.output(0)]).ravel()[0])
    except Exception as exc:  # noqa: BLE001 - a refusal is the answer
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return f"rejected ({lines[-1][:60] if lines else type(exc).__name__})"
    return {EXACT: "exact", SATURATED: "int16-saturated"}.get(y, f"y={y}")
