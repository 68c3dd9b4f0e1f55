"""ConvTranspose with output_shape and output_padding through TVM's Relax ONNX importer

Measures the output shape against output_shape (5x5 input, 3x3 kernel, strides 2, output_padding 1, output_shape
10x10), the block the spec's pads select against a float64 reference, and output_padding >= stride with dilation 2.
"""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

print("tvm", tvm.__version__, "| onnx", onnx.__version__)
C_IN, C_OUT = 2, 3
rng = np.random.default_rng(0)


def transpose_conv(x: np.ndarray, w: np.ndarray, s: int, d: int, out_pad: int, out: int) -> np.ndarray:
    """float64 ONNX ConvTranspose with output_shape `out`: full output plus output_padding, cropped by the
    spec's pads (total = full + out_pad - out; begin = total - total // 2, end = total // 2)."""
    n_in, k = x.shape[-1], w.shape[-1]
    full = (n_in - 1) * s + d * (k - 1) + 1 + out_pad
    y = np.zeros((1, w.shape[1], full, full))
    for i, j, a, b in np.ndindex(n_in, n_in, k, k):
        y[:, :, i * s + a * d, j * s + b * d] += x[:, :, i, j].astype(np.float64) @ w[:, :, a, b]
    total = full - out
    begin = total - total // 2
    return y[:, :, begin:begin + out, begin:begin + out]


def model(x: np.ndarray, w: np.ndarray, s: int, d: int, out_pad: int, out: int) -> onnx.ModelProto:
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[s, s], dilations=[d, d],
                            output_padding=[out_pad, out_pad], output_shape=[out, out])
    graph = helper.make_graph([node], "convtranspose_output_shape",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C_OUT, out, out])],
                              [numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    return m


defect = False
for L, K, S, D, OP, OUT in ((5, 3, 2, 1, 1, 10), (5, 2, 1, 2, 1, 7)):
    x = rng.standard_normal((1, C_IN, L, L)).astype(np.float32)
    w = rng.standard_normal((C_IN, C_OUT, K, K)).astype(np.float32)
    expected = transpose_conv(x, w, S, D, OP, OUT)
    full = (L - 1) * S + D * (K - 1) + 1 + OP
    print(f"ConvTranspose input {list(x.shape)}, kernel {K}x{K}, strides {S}, dilations {D}, output_padding {OP}, "
          f"output_shape [{OUT}, {OUT}] (total_padding {full - OUT}): expected {list(expected.shape)}")
    try:
        mod = from_onnx(model(x, w, S, D, OP, OUT), shape_dict={"x": list(x.shape)})
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        y = vm["main"](tvm.runtime.tensor(x)).numpy()
    except Exception as exc:  # noqa: BLE001 - a refused valid model is the defect
        defect = True
        print(f"  from_onnx/compile raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        continue
    if y.shape == expected.shape:
        err = np.abs(y - expected).max()
        print(f"  output {list(y.shape)}, max |y - expected| = {err:.3g}")
        defect = defect or err > 1e-4
    else:
        defect = True
        begin = (full - OUT) - (full - OUT) // 2
        block = y[:, :, begin:begin + OUT, begin:begin + OUT]
        print(f"  output {list(y.shape)} (full + output_padding, no pads); its [{begin}:{begin + OUT}] block matches the "
              f"expected output to {np.abs(block - expected).max():.2g}")
print("DEFECT: output_shape ignored" if defect else "output_shape honoured")
sys.exit(1 if defect else 0)
