"""ConvTranspose with output_shape (no pads) through TVM's Relax ONNX importer

Measures the output shape against output_shape (5x5 input, 3x3 kernel, strides 2, output_shape 9x9) and whether the
block the spec's pads select from TVM's full output equals a float64 reference.
"""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

print("tvm", tvm.__version__, "| onnx", onnx.__version__)

C_IN, C_OUT, L, K, S, OUT = 2, 3, 5, 3, 2, 9
rng = np.random.default_rng(0)
x = rng.standard_normal((1, C_IN, L, L)).astype(np.float32)
w = rng.standard_normal((C_IN, C_OUT, K, K)).astype(np.float32)  # ONNX ConvTranspose weight: (C_in, C_out, k, k)
FULL = (L - 1) * S + K                         # 11
TOTAL = FULL - OUT                             # spec total_padding: 2
BEGIN, END = TOTAL - TOTAL // 2, TOTAL // 2    # auto_pad NOTSET split: 1, 1


def full_transpose() -> np.ndarray:
    """float64 transposed convolution without padding: each input pixel scatters x * w at stride S."""
    y = np.zeros((1, C_OUT, FULL, FULL))
    for i, j in np.ndindex(L, L):
        y[:, :, i * S:i * S + K, j * S:j * S + K] += np.einsum("nc,coab->noab", x[:, :, i, j].astype(np.float64), w)
    return y


full = full_transpose()
expected = full[:, :, BEGIN:FULL - END, BEGIN:FULL - END]

node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[S, S], output_shape=[OUT, OUT])
graph = helper.make_graph([node], "convtranspose_output_shape",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C_OUT, OUT, OUT])],
                          [numpy_helper.from_array(w, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
print(f"ConvTranspose input {list(x.shape)}, kernel {K}x{K}, strides {S}, output_shape [{OUT}, {OUT}] "
      f"(spec: total_padding {TOTAL}, pads {BEGIN} and {END}); expected output {list(expected.shape)}")

mod = from_onnx(model, shape_dict={"x": list(x.shape)})
print(f"from_onnx: main returns {mod['main'].ret_ty}")
vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
y = vm["main"](tvm.runtime.tensor(x)).numpy()
print(f"compiled output {list(y.shape)}, expected {list(expected.shape)}")
if y.shape == expected.shape:
    err = np.abs(y - expected)
    worst = np.unravel_index(int(err.argmax()), err.shape)
    print(f"max |y - expected| = {err.max():.3g} at {tuple(map(int, worst))}")
    defect = err.max() > 1e-4
elif y.shape == full.shape:
    inner = y[:, :, BEGIN:FULL - END, BEGIN:FULL - END]
    print(f"the output is the unpadded {FULL}x{FULL} transposed convolution (max |y - full| = {np.abs(y - full).max():.2g}); "
          f"its [{BEGIN}:{FULL - END}] block matches the expected output to {np.abs(inner - expected).max():.2g}")
    defect = True
else:
    defect = True
print("DEFECT: output_shape ignored" if defect else "output_shape honoured")
sys.exit(1 if defect else 0)
