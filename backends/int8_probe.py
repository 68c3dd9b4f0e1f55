"""Whether an int8 convolution saturates u8 x s8 pair sums at int16: one probe, read live as a host fact.

Without VNNI (AVX512_VNNI, AVX_VNNI, AMX), x86 int8 kernels multiply u8 x s8 with `vpmaddubsw`, which adds
two products into a saturating int16. Whether a runtime takes that path is decided inside it, from CPUID
(fbgemm, MLAS) or from CPUID capped by ONEDNN_MAX_CPU_ISA (oneDNN), and no runtime exposes the decision,
so the backend runs this probe through its own quantized path and the answer is the fact: a 1x1 uint8
conv2d of four inputs 255 with four weights 127 (scales 1, zero points 0, y_scale 1000), two output
channels (with one, MLAS takes another, exact kernel: measured on ONNX Runtime 1.32).
Exact: 4 * 255 * 127 = 129540 -> y = 130. Pair sums clamped to 32767: 2 * 32767 = 65534 -> y = 66.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from harness.model.build import make_case
from harness.model.case import Case
from harness.numerics.inputs import Inputs, make_inputs

EXACT, SATURATED = 130, 66


def probe() -> tuple[Case, Inputs]:
    """The probe's case (a 1x1 uint8 conv2d, 4 -> 2 channels, pinned scales) and its inputs (255s, 127s)."""
    case = make_case(id="int8_probe", op="conv2d", in_channels=4, out_channels=2, input_size=1, kernel_size=1,
                     bias=False, dtype="uint8", quant={"x_scale": 1.0, "x_zero_point": 0, "w_scale": 1.0,
                                                       "y_scale": 1000.0, "y_zero_point": 0})
    drawn = make_inputs(case)
    return case, dataclasses.replace(drawn, x=np.full_like(drawn.x, 255), w=np.full_like(drawn.w, 127))


def pair_sums(run: Callable[[Case, Inputs], np.ndarray]) -> str:
    """'exact', 'int16-saturated', 'y=<value>' (neither) or 'rejected (<reason>)', `run` giving y's array."""
    case, inputs = probe()
    try:
        values = {int(v) for v in np.asarray(run(case, inputs)).ravel()}
    except Exception as exc:  # noqa: BLE001 - a refusal is the answer
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return f"rejected ({lines[-1][:60] if lines else type(exc).__name__})"
    if len(values) != 1:
        return "y=" + ",".join(map(str, sorted(values)))
    y = values.pop()
    return {EXACT: "exact", SATURATED: "int16-saturated"}.get(y, f"y={y}")
