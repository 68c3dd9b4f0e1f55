"""QDQ Conv with int8 activations (zero point 0) on OpenVINO CPU: weights as the s8 x s8 kernel applies them

Measures, under the ONEDNN_MAX_CPU_ISA of the environment, the kernel OpenVINO reports and the results for x = ones over
weights [1, 1, 1] and [-1, 3, 5], and the fuzz case (depthwise conv1d, w [8, 1]), against exact integer arithmetic and
against weights rounded to even (2 * round(w / 2)); and the same conv with x_zero_point 1.

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


def qdq_model(x: np.ndarray, w: np.ndarray, group: int, x_zp: int) -> onnx.ModelProto:
    """int8 x and y, int8 w, every scale 1: y = saturate(sum((x - x_zp) * w))."""
    inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in (
        ("x_scale", 1.0, np.float32), ("x_zero_point", x_zp, np.int8), ("w", w, np.int8), ("w_scale", 1.0, np.float32),
        ("w_zero_point", 0, np.int8), ("y_scale", 1.0, np.float32), ("y_zero_point", 0, np.int8))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["wf"]),
             helper.make_node("Conv", ["xf", "wf"], ["yf"], group=group),
             helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero_point"], ["y"])]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.INT8, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [None] * x.ndim)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(m)
    return m


def run(x: np.ndarray, w: np.ndarray, group: int = 1, x_zp: int = 0) -> tuple[np.ndarray, str]:
    compiled = core.compile_model(core.read_model(qdq_model(x, w, group, x_zp).SerializeToString()), "CPU")
    kernels = []
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        if "layerType" in info and "conv" in info["layerType"].astype(str).lower():
            kernels.append(f"{info['runtimePrecision'].astype(str)}/{info['primitiveType'].astype(str)}")
    return np.asarray(compiled({"x": x})[compiled.output(0)]).astype(np.int64), ", ".join(kernels)


def exact(x: np.ndarray, w: np.ndarray, group: int = 1, x_zp: int = 0) -> np.ndarray:
    xs, ws = x.astype(np.int64) - x_zp, w.astype(np.int64)
    og, cg, k = w.shape[0] // group, w.shape[1], w.shape[2]
    out = np.zeros((x.shape[0], w.shape[0], x.shape[2] - k + 1), np.int64)
    for g in range(group):
        win = np.lib.stride_tricks.sliding_window_view(xs[:, g * cg:(g + 1) * cg], k, axis=2)
        out[:, g * og:(g + 1) * og] = np.einsum("ncit,oct->noi", win, ws[g * og:(g + 1) * og])
    return np.clip(out, -128, 127)


cases = [("conv1d 1->2, kernel 3, x = ones, w = [1, 1, 1] and [-1, 3, 5]", np.ones((1, 1, 5), np.int8),
          np.array([[[1, 1, 1]], [[-1, 3, 5]]], np.int8), 1),
         ("depthwise conv1d 2->2, kernel 1, x = [-1, -5], w = [8, 1]", np.array([-1, -5], np.int8).reshape(1, 2, 1),
          np.array([8, 1], np.int8).reshape(2, 1, 1), 2)]
defect, kernels_seen = False, set()
for name, x, w, group in cases:
    try:
        y, kernels = run(x, w, group)
    except Exception as exc:  # noqa: BLE001 - a refusal is another defect, not this one
        print(f"{name}: compile/infer raised {str(exc).strip().splitlines()[-1][:200]}")
        continue
    kernels_seen.add(kernels)
    ref = exact(x, w, group)
    print(f"{name} [OpenVINO ran {kernels}]:\n  expected {ref.reshape(ref.shape[1], -1).tolist()}\n"
          f"  got      {y.reshape(y.shape[1], -1).tolist()}")
    defect = defect or not np.array_equal(y, ref)

try:  # context: a nonzero zero point takes another kernel
    x = np.full((1, 1, 5), 2, np.int8)
    y, kernels = run(x, np.array([[[1, 1, 1]], [[-1, 3, 5]]], np.int8), 1, x_zp=1)
    print(f"same conv with x = 2, x_zero_point 1 [OpenVINO ran {kernels}]: got {y.reshape(2, -1)[:, 0].tolist()}, "
          f"expected {exact(x, np.array([[[1, 1, 1]], [[-1, 3, 5]]], np.int8), 1, 1).reshape(2, -1)[:, 0].tolist()}")
except Exception as exc:  # noqa: BLE001 - context only (refused with VNNI: another report)
    print(f"same conv with x_zero_point 1: compile_model raised {str(exc).strip().splitlines()[-1][:160]}")

if not defect:
    print(f"not shown on this host: OpenVINO ran {', '.join(sorted(kernels_seen))} and every weight acts unchanged "
          "(oneDNN with VNNI)")
    sys.exit(0)
print("DEFECT: the s8 x s8 kernel halves the weights")
sys.exit(1)
