"""[CPU] Grouped uint8 (QDQ) Conv 3-D with padding is wrong on the padded border in the jit_gemm_I8 path: H/W padding acts as uint8 0, not the zero point

Project: openvinotoolkit/openvino (https://github.com/openvinotoolkit/openvino/issues)
Upstream: none found
Related: https://github.com/openvinotoolkit/oneDNN/pull/90 ("Fixed zeropoints for jit gemm int8 3d conv", open since 2021); https://github.com/openvinotoolkit/openvino/pull/5563 (the OpenVINO side of the zero-point support for that path)
Checked: 2026-11-28, openvino 2026.4.1, onnx 1.17.0, searched openvinotoolkit/openvino issues and PRs for "grouped conv3d int8 padding wrong", "jit_gemm int8 3d zero point", "quantized Conv 3D group padding"

What happens: DequantizeLinear(uint8 x) -> Conv(3-D, group=2, pads) -> QuantizeLinear runs as OpenVINO's u8 int8 convolution. Where OpenVINO runs it with the u8/jit_gemm_I8 kernel (an AVX2-only AMD EPYC; this Xeon under ONEDNN_MAX_CPU_ISA=AVX2) the outputs that read padding are wrong. Kernel 1: 2 -> 4 channels, groups 2, a 1x1x1 input (x = [130, 126], zero point 128, w = [1, 2, 3, 4], all scales 1, y zero point 128) padded by 1 at the end of W gives [0, 0, 0, 0] at the padded position instead of [128, 128, 128, 128]; with y_scale 4 it gives [96, 64, 32, 0], exactly what padding with uint8 0 (x - x_zp = -128) gives. The same holds for padding at the start of W or of H, and (kernel 2, 3x4x5 input) for padding on one side of W or H alone: the result equals the pad-with-0 emulation bit for bit. Padding on D alone (start or end) is exact. Padding every side (kernel 2, 3x4x5, pads 1) does not fit that model: 96-108 of 480 elements off by up to 175-204 units of y, in group 0's output channels only (4 random draws). groups=1 (u8/jit_avx2_I8), conv2d, conv1d, and this Xeon uncapped or under AVX512_CORE (u8/brgconv_avx512_I8) are exact.

Expected: the padding is the real 0, i.e. x_zero_point in the uint8 domain (ONNX: the Conv pads the dequantized input with 0.0); y = saturate(round(sum((x - x_zp) * w) * x_scale * w_scale / y_scale) + y_zp), computed in the script with NumPy integers.

Mechanism: not confirmed. The kernel-1 and single-side H/W cases fit an im2col that fills padded H/W positions with 0 instead of the input zero point (the compensation for x_zp then subtracts x_zp from them too); the fully padded case does not fit it and hits one group only, which suggests a per-group offset into the padded buffer as well. openvinotoolkit/oneDNN PR #90 ("Fixed zeropoints for jit gemm int8 3d conv") changes exactly this path (gemm-based int8 3-D convolution with zero points) and has been open since 2021.

Host: where OpenVINO's CPU plugin runs the grouped u8 conv3d as u8/jit_gemm_I8 (AVX2 without AVX-512: measured on an AMD EPYC and on this Xeon under ONEDNN_MAX_CPU_ISA=AVX2); not shown where it runs brgconv (AVX-512)
"""
import os
import sys

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper, numpy_helper

core = ov.Core()
print("openvino", ov.__version__, "| CPU", core.get_property("CPU", "FULL_DEVICE_NAME"),
      "| ONEDNN_MAX_CPU_ISA =", os.environ.get("ONEDNN_MAX_CPU_ISA", "(unset)"))


def qdq_model(x_shape: tuple, w: np.ndarray, pads: list, group: int, q: tuple) -> onnx.ModelProto:
    sx, zx, sy, zy = q
    inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in (
        ("x_scale", sx, np.float32), ("x_zero_point", zx, np.uint8), ("w", w, np.int8), ("w_scale", 1.0, np.float32),
        ("w_zero_point", 0, np.int8), ("y_scale", sy, np.float32), ("y_zero_point", zy, np.uint8))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["wf"]),
             helper.make_node("Conv", ["xf", "wf"], ["yf"], group=group, pads=pads),
             helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero_point"], ["y"])]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [None] * 5)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(m)
    return m


def reference(x: np.ndarray, w: np.ndarray, pads: list, group: int, q: tuple, pad_value: int) -> np.ndarray:
    """y from exact integers; x - x_zp padded with pad_value (0: the spec; -x_zp: padding with uint8 0)."""
    sx, zx, sy, zy = q
    xs = np.pad(x.astype(np.int64) - zx, [(0, 0), (0, 0), *zip(pads[:3], pads[3:])], constant_values=pad_value)
    o, cg, *k = w.shape
    out = [n - kk + 1 for n, kk in zip(xs.shape[2:], k)]
    acc = np.zeros((x.shape[0], o, *out), np.int64)
    og = o // group
    for g in range(group):
        for t in np.ndindex(*k):
            win = xs[:, g * cg:(g + 1) * cg, t[0]:t[0] + out[0], t[1]:t[1] + out[1], t[2]:t[2] + out[2]]
            acc[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", win, w[g * og:(g + 1) * og, :, t[0], t[1], t[2]].astype(np.int64))
    return np.clip(np.rint(acc * (float(np.float32(sx)) / float(np.float32(sy)))) + zy, 0, 255)


def run(x: np.ndarray, w: np.ndarray, pads: list, group: int, q: tuple) -> tuple[np.ndarray, str]:
    compiled = core.compile_model(core.read_model(qdq_model(x.shape, w, pads, group, q).SerializeToString()), "CPU")
    kernels = [f"{i['runtimePrecision'].astype(str)}/{i['primitiveType'].astype(str)}"
               for i in (op.get_rt_info() for op in compiled.get_runtime_model().get_ordered_ops())
               if "layerType" in i and "conv" in i["layerType"].astype(str).lower()]
    return np.asarray(compiled({"x": x})[compiled.output(0)]).astype(np.int64), ", ".join(kernels)


defect, kernels_seen = False, set()
# 1. kernel 1, groups 2, a single input voxel padded by 1 at the end of W: the padded output must be y_zp
x = np.array([130, 126], np.uint8).reshape(1, 2, 1, 1, 1)
w = np.array([1, 2, 3, 4], np.int8).reshape(4, 1, 1, 1, 1)
for y_scale in (1.0, 4.0):
    q = (1.0, 128, y_scale, 128)
    pads = [0, 0, 0, 0, 0, 1]
    y, kernels = run(x, w, pads, 2, q)
    kernels_seen.add(kernels)
    ref, ref0 = reference(x, w, pads, 2, q, 0), reference(x, w, pads, 2, q, -128)
    print(f"conv3d 2->4 groups 2, kernel 1, x = [130, 126] (x_zp 128), w = [1, 2, 3, 4], y_scale {y_scale:g}, "
          f"pad W end 1 [OpenVINO ran {kernels}]: padded output {y[0, :, 0, 0, 1].tolist()}, expected "
          f"{ref[0, :, 0, 0, 1].astype(int).tolist()} (padding with uint8 0 would give {ref0[0, :, 0, 0, 1].astype(int).tolist()})")
    defect = defect or np.abs(y - ref).max() > 1

# 2. kernel 2, 3x4x5 input, padded by 1 on every side: errors in group 0's channels
rng = np.random.default_rng(0)
x = np.clip(128 + rng.integers(-8, 9, size=(1, 2, 3, 4, 5)), 0, 255).astype(np.uint8)
w = rng.integers(-8, 9, size=(4, 1, 2, 2, 2)).astype(np.int8)
q = (1.0, 128, 2.0, 128)
for pads in ([1, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0]):
    y, kernels = run(x, w, pads, 2, q)
    kernels_seen.add(kernels)
    off = np.abs(y - reference(x, w, pads, 2, q, 0))
    print(f"conv3d 2->4 groups 2, kernel 2, input 3x4x5, pads {pads} [OpenVINO ran {kernels}]: max |y - exact| = "
          f"{int(off.max())} units of y, {int((off > 1).sum())}/{off.size} elements off, in output channels "
          f"{sorted(set(np.nonzero(off > 1)[1].tolist()))}")
    defect = defect or off.max() > 1

if not defect:
    print(f"not shown on this host: OpenVINO ran {', '.join(sorted(kernels_seen))}, exact")
    sys.exit(0)
print("DEFECT: the padded border of a grouped uint8 conv3d is wrong")
sys.exit(1)
