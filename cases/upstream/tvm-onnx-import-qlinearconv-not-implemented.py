"""[Relax][Frontend][ONNX] Support QLinearConv: from_onnx raises OpNotImplemented, while the same convolution in QDQ form imports

Kind: valid-refused
Ask: a feature: a QLinearConv converter (the Relay importer had one), for example as DequantizeLinear -> Conv -> QuantizeLinear, which the Relax importer already handles.

What happens: A one-node QLinearConv model (uint8 input 1x1x3x3, zero point 128, int8 weight 1x1x2x2, scales 1) fails in from_onnx with "OpNotImplemented: The following operators are not supported for frontend ONNX: QLinearConv". The same convolution written as DequantizeLinear -> Conv -> QuantizeLinear imports and is exact, as are the QDQ ConvTranspose models. Quantized models exported by ONNX Runtime's quantizer in the QOperator format use QLinearConv.

Expected: y = saturate(round((x - x_zero_point) * (w - w_zero_point) summed * x_scale * w_scale / y_scale) + y_zero_point) (https://onnx.ai/onnx/operators/onnx__QLinearConv.html): here [[116, 112], [104, 100]].

Mechanism: python/tvm/relax/frontend/onnx/onnx_frontend.py, _get_convert_map (main 5d4dc87, line 5639 on): QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (lines 5809-5811) but no QLinearConv (nor QLinearMatMul); apache/tvm#17197 tracked the Relay converter.
"""
import sys
import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm.relax.frontend.onnx import from_onnx
print("tvm", tvm.__version__, "| onnx", onnx.__version__)
x, w = np.array([[[[127, 126, 125], [124, 123, 122], [121, 120, 119]]]], np.uint8), np.ones((1, 1, 2, 2), np.int8)
init = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in (("s", 1, np.float32), ("xz", 128, np.uint8), ("w", w, np.int8), ("wz", 0, np.int8))]
node = helper.make_node("QLinearConv", ["x", "s", "xz", "w", "s", "wz", "s", "xz"], ["y"])
graph = helper.make_graph([node], "qlinearconv", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 3, 3])], [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 1, 2, 2])], init)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model, full_check=True)
expected = np.lib.stride_tricks.sliding_window_view(x[0, 0].astype(int) - 128, (2, 2)).sum(axis=(2, 3)) + 128
try:
    y = tvm.relax.VirtualMachine(tvm.compile(from_onnx(model), target="llvm"), tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()[0, 0].tolist()
except Exception as exc:  # the refusal
    y = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1]}"
print("expected", expected.tolist(), "\nTVM     ", y)
sys.exit(0 if y == expected.tolist() else 1)
