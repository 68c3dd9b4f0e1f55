"""[Relax][Frontend][ONNX] QLinearConv has no converter: from_onnx raises OpNotImplemented

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/issues/17197 (Relay's QLinearConv was 2-D only; closed); https://github.com/apache/tvm/pull/19391 (Relax ONNX QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, onnx 1.17.0, searched apache/tvm issues and PRs for "QLinearConv relax", "onnx frontend QLinearConv not supported", "QLinearConv QLinearMatMul converter"

What happens: an ONNX QLinearConv (opset 10+, the form ONNX Runtime's quantizer writes with QuantFormat.QOperator and that ONNX Runtime and OpenVINO run) cannot be imported: from_onnx raises "OpNotImplemented: The following operators are not supported for frontend ONNX: QLinearConv", for conv1d, conv2d and conv3d, uint8 and int8 alike. The same convolution written as DequantizeLinear -> Conv -> QuantizeLinear (QDQ) imports and agrees with exact integer arithmetic within one unit of y.

Expected: QLinearConv imports, like the Relay ONNX importer's converter did (2-D), e.g. by lowering it to the dequantize -> conv -> quantize form the importer already handles. The ONNX definition: y = saturate(round_half_to_even(sum((x - x_zero_point) * (w - w_zero_point)) * x_scale * w_scale / y_scale) + y_zero_point); the script computes it with exact integers in NumPy.

Mechanism: python/tvm/relax/frontend/onnx/onnx_frontend.py, _get_convert_map(): QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear are registered; QLinearConv (and QLinearMatMul, ConvInteger) are not, so the unsupported-operator check refuses the model.

Host: any
"""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

print("tvm", tvm.__version__, "| onnx", onnx.__version__)
rng = np.random.default_rng(0)
C_IN, C_OUT, L, K = 3, 4, 6, 3
SX, ZX, SW, SY, ZY = 0.02, 128, 0.01, 0.001, 120
x = rng.integers(ZX - 8, ZX + 9, size=(1, C_IN, L, L)).astype(np.uint8)
w = rng.integers(-8, 9, size=(C_OUT, C_IN, K, K)).astype(np.int8)

win = np.lib.stride_tricks.sliding_window_view(x.astype(np.int64) - ZX, (K, K), axis=(2, 3))
acc = np.einsum("ncijab,ocab->noij", win, w.astype(np.int64))  # exact integers
expected = np.clip(np.rint(acc * (np.float64(np.float32(SX)) * np.float32(SW) / np.float32(SY))) + ZY, 0, 255)

inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in (
    ("x_scale", SX, np.float32), ("x_zero_point", ZX, np.uint8), ("w", w, np.int8), ("w_scale", SW, np.float32),
    ("w_zero_point", 0, np.int8), ("y_scale", SY, np.float32), ("y_zero_point", ZY, np.uint8))]
x_info = helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))
y_info = helper.make_tensor_value_info("y", TensorProto.UINT8, list(expected.shape))


def build(nodes: list) -> onnx.ModelProto:
    m = helper.make_model(helper.make_graph(nodes, "q", [x_info], [y_info], inits),
                          opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    return m


def run(model: onnx.ModelProto) -> np.ndarray:
    mod = from_onnx(model, shape_dict={"x": list(x.shape)}, dtype_dict={"x": "uint8"})
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x)).numpy().astype(np.int64)


qlinear = build([helper.make_node("QLinearConv", ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
                                                 "y_scale", "y_zero_point"], ["y"])])
qdq = build([helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["wf"]),
             helper.make_node("Conv", ["xf", "wf"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zero_point"], ["y"])])
print(f"uint8 x {list(x.shape)}, int8 w {list(w.shape)}: expected y {list(expected.shape)}, "
      f"values {int(expected.min())}..{int(expected.max())}")

try:
    y = run(qdq)
    print(f"QDQ form (DequantizeLinear -> Conv -> QuantizeLinear): max |y - exact| = {np.abs(y - expected).max()} unit(s)")
except Exception as exc:  # noqa: BLE001 - context only
    print(f"QDQ form failed too: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")

try:
    y = run(qlinear)
except Exception as exc:  # noqa: BLE001 - the refusal is the defect
    print(f"QLinearConv: from_onnx raised {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}")
    print("DEFECT: QLinearConv is not supported")
    sys.exit(1)
err = np.abs(y - expected).max() if y.shape == expected.shape else None
print(f"QLinearConv: output {list(y.shape)}" + ("" if err is None else f", max |y - exact| = {err} unit(s)"))
bad = err is None or err > 1
print("DEFECT: wrong result" if bad else "QLinearConv imported and right")
sys.exit(1 if bad else 0)
