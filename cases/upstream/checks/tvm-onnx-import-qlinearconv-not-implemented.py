"""QLinearConv and its QDQ form (DequantizeLinear -> Conv -> QuantizeLinear) through TVM's Relax ONNX importer

Measures, for a uint8 3 -> 4 channel 3x3 convolution, whether each form imports, and the QDQ result against exact
integer arithmetic in units of y.
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
