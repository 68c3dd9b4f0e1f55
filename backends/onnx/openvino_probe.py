"""OpenVINO's int8 host facts: the int8 pair-sum probe (backends/int8_probe.py) as a QDQ model, and the kernel
a padded grouped conv3d gets.

oneDNN inside OpenVINO's CPU plugin picks its int8 kernel from CPUID capped by ONEDNN_MAX_CPU_ISA, and
the kernel's name does not tell VNNI (`brgconv_avx512_I8` with and without it), so the pair-sum probe computes.
Which kernel runs a padded grouped uint8 conv3d the name does tell, and it decides a defect: `jit_gemm_I8`
fills the padded border with 0 instead of the zero point (known issue openvino-int8-grouped-conv3d-padding),
`brgconv_avx512_I8` is exact. Measured 2026-11-30, 2-core AMD EPYC Zen 4, openvino 2026.4.1: brgconv_avx512_I8
uncapped and under ONEDNN_MAX_CPU_ISA=AVX512_CORE, jit_gemm_I8 under AVX2 (an ungrouped one: jit_avx2_I8).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from backends.int8_probe import pair_sums
from backends.onnx.model import node_attributes
from backends.onnx.qmodel import build_quant_model
from harness.model.build import make_case
from harness.model.case import Case
from harness.numerics.inputs import Inputs, make_inputs


def int8_pair_sums(compile_model: Callable[[bytes], Any]) -> str:
    """'exact', 'int16-saturated', 'y=<value>' (neither) or 'rejected (<reason>)'."""
    def run(case: Case, inputs: Inputs) -> np.ndarray:
        compiled = compile_model(build_quant_model(case, inputs, node_attributes(case)[0], "qdq").SerializeToString())
        return np.asarray(compiled({"x": inputs.x})[compiled.output(0)])
    return pair_sums(run)


def int8_grouped_conv3d_kernel(compile_model: Callable[[bytes], Any]) -> str:
    """The primitive type OpenVINO runs a padded grouped uint8 conv3d with (QDQ: 2 -> 4 channels, groups 2,
    kernel 2 over 2x3x3, padding 1), e.g. 'brgconv_avx512_I8' or 'jit_gemm_I8'; 'rejected (<reason>)' where
    the compile raises."""
    case = make_case(id="grouped_conv3d_probe", op="conv3d", in_channels=2, out_channels=4, groups=2,
                     input_size=[2, 3, 3], kernel_size=2, padding=1, bias=False, dtype="uint8")
    try:
        compiled = compile_model(build_quant_model(case, make_inputs(case), node_attributes(case)[0],
                                                   "qdq").SerializeToString())
    except Exception as exc:  # noqa: BLE001 - a refusal is the answer
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return f"rejected ({lines[-1][:60] if lines else type(exc).__name__})"
    kinds = [c.rsplit("/", 1)[-1] for c in conv_precisions(compiled).split(", ") if c.startswith("Convolution")]
    return kinds[0] if kinds else "none"


def conv_precisions(compiled: Any) -> str:
    """The compiled model's convolution nodes as 'layerType: runtimePrecision/primitiveType' (execution graph)."""
    found = []
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        kind, prec, prim = (info[k].astype(str) if k in info else "?"
                            for k in ("layerType", "runtimePrecision", "primitiveType"))
        if "conv" in kind.lower():  # Convolution, Deconvolution
            found.append(f"{kind}: {prec}/{prim}")
    return ", ".join(found)
