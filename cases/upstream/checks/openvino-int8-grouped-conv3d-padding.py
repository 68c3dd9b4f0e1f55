"""Grouped uint8 (QDQ) Conv 3-D with padding on OpenVINO CPU: the padded border against exact integer arithmetic

Measures, under the ONEDNN_MAX_CPU_ISA of the environment (AVX2, the default here, selects u8/jit_gemm_I8; ALL lets AVX-512 CPUs run
brgconv), the kernel-1 case padded on W with y_scale 1 and 4, and kernel 2 over 3x4x5 padded on every side and on D
only: the kernel OpenVINO reports, the padded outputs, and the elements and output channels off.

With ONEDNN_MAX_CPU_ISA unset it caps oneDNN at AVX2 (the path the entry is about); set it to ALL for the CPU's own.
"""
import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # the path without AVX-512/VNNI; ONEDNN_MAX_CPU_ISA=ALL measures the CPU's own
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
