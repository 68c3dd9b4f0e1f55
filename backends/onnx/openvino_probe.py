"""OpenVINO's answer to the int8 pair-sum probe (backends/int8_probe.py): the probe as a QDQ model.

oneDNN inside OpenVINO's CPU plugin picks its int8 kernel from CPUID capped by ONEDNN_MAX_CPU_ISA, and
the kernel's name does not tell VNNI (`brgconv_avx512_I8` with and without it), so the probe computes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from backends.int8_probe import pair_sums
from backends.onnx.model import node_attributes
from backends.onnx.qmodel import build_quant_model
from harness.model.case import Case
from harness.numerics.inputs import Inputs


def int8_pair_sums(compile_model: Callable[[bytes], Any]) -> str:
    """'exact', 'int16-saturated', 'y=<value>' (neither) or 'rejected (<reason>)'."""
    def run(case: Case, inputs: Inputs) -> np.ndarray:
        compiled = compile_model(build_quant_model(case, inputs, node_attributes(case)[0], "qdq").SerializeToString())
        return np.asarray(compiled({"x": inputs.x})[compiled.output(0)])
    return pair_sums(run)
