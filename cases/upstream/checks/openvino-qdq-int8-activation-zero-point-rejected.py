"""QDQ Conv on int8 inputs with a nonzero zero point: OpenVINO CPU compile_model at its default inference precision

Measures, for uint8 activations (zero point 131), int8 with zero point 0 and int8 with zero point 3 (DequantizeLinear ->
Conv -> QuantizeLinear, 3x3 kernel, 4 -> 6 channels), whether compile_model succeeds, the convolution kernel it picks,
and the largest difference from exact integer arithmetic, in units of y.
"""
import os
import sys

import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper, numpy_helper

core = ov.Core()
print("openvino", ov.__version__, "| CPU", core.get_property("CPU", "FULL_DEVICE_NAME"),
      "| capabilities", core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"),
      "| ONEDNN_MAX_CPU_ISA =", os.environ.get("ONEDNN_MAX_CPU_ISA", "(unset)"))

rng = np.random.default_rng(0)
W = rng.integers(-8, 9, size=(6, 4, 3, 3)).astype(np.int8)
SX, SW, SY = 0.01, 0.003, 0.0005


def model(signed: bool, x_zp: int, y_zp: int) -> bytes:
    xt, npx = (TensorProto.INT8, np.int8) if signed else (TensorProto.UINT8, np.uint8)
    inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in (
        ("x_scale", SX, np.float32), ("x_zero_point", x_zp, npx), ("w", W, np.int8), ("w_scale", SW, np.float32),
        ("w_zero_point", 0, np.int8), ("y_scale", SY, np.float32), ("y_zero_point", y_zp, npx))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["wf"]),
             helper.make_node("Conv", ["xf", "wf"], ["yf"], kernel_shape=[3, 3]),
             helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero_point"], ["y"])]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", xt, [1, 4, 7, 7])],
                              [helper.make_tensor_value_info("y", xt, [1, 6, 5, 5])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(m)
    return m.SerializeToString()


def exact(x: np.ndarray, x_zp: int, y_zp: int, lo: int, hi: int) -> np.ndarray:
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64) - x_zp, (3, 3), axis=(2, 3))
    acc = np.einsum("ncijab,ocab->noij", win, W.astype(np.int64))
    m = float(np.float32(SX)) * float(np.float32(SW)) / float(np.float32(SY))
    return np.clip(np.rint(acc * m) + y_zp, lo, hi)


refused = False
for signed, x_zp, y_zp in ((False, 131, 128), (True, 0, -1), (True, 3, -1)):
    name = f"{'int8' if signed else 'uint8'} activations, x_zero_point {x_zp}"
    lo, hi = (-128, 127) if signed else (0, 255)
    x = np.clip(x_zp + rng.integers(-8, 9, size=(1, 4, 7, 7)), lo, hi).astype(np.int8 if signed else np.uint8)
    try:
        compiled = core.compile_model(core.read_model(model(signed, x_zp, y_zp)), "CPU")
    except Exception as exc:  # noqa: BLE001 - the refusal is the defect (when it is the int8 nonzero-zero-point model)
        message = " | ".join(ln.strip() for ln in str(exc).strip().splitlines() if ln.strip())
        print(f"{name}: compile_model raised: {message[:400]}")
        refused = refused or (signed and x_zp != 0)
        continue
    y = np.asarray(compiled({"x": x})[compiled.output(0)]).astype(np.int64)
    kernels = [f"{i['runtimePrecision'].astype(str)}/{i['primitiveType'].astype(str)}"
               for i in (op.get_rt_info() for op in compiled.get_runtime_model().get_ordered_ops())
               if "layerType" in i and "conv" in i["layerType"].astype(str).lower()]
    print(f"{name}: compiled [{', '.join(kernels)}], max |y - exact| = {int(np.abs(y - exact(x, x_zp, y_zp, lo, hi)).max())} unit(s)")

if not refused:
    print("not shown on this host: the int8 model with a nonzero zero point compiles")
    sys.exit(0)
print("DEFECT: a valid int8-activation QDQ Conv with a nonzero zero point is refused")
sys.exit(1)
