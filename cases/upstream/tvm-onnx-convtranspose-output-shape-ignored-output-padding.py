"""[Relax][Frontend][ONNX] ConvTranspose with output_shape and output_padding: output_shape dropped, the output is too long by the pads

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/pull/19450 (auto_pad for ConvTranspose; says output_shape "remains unsupported"); https://github.com/apache/tvm/pull/11076 (the Relay ONNX importer's output_shape support)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, onnx 1.17.0, searched apache/tvm issues and PRs for "ConvTranspose output_shape", "ConvTranspose output_padding output_shape", "expects the output padding less than the strides"

What happens: the ONNX spec's total_padding for ConvTranspose counts output_padding (total_padding = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - output_shape), so a model may give output_shape and output_padding together. The Relax ONNX importer drops output_shape, pads nothing and applies output_padding: the output is the full transposed convolution plus output_padding. Measured: input 1x2x5x5, 3x3 kernel, strides 2, output_padding [1, 1], output_shape [10, 10] (total_padding 2, pads 1 and 1) gives (1, 3, 12, 12) instead of (1, 3, 10, 10); its [1:11] block equals the expected output. Where output_padding reaches the stride, which the spec allows with a larger dilation (strides 1, dilations 2, output_padding 1, output_shape [7, 7] on a 5x5 input, 2x2 kernel: total_padding 1), the import is refused: "Conv2dTranspose expects the output padding less than the strides".

Expected: the output has the shape output_shape states, with pads derived as the spec says (auto_pad NOTSET: pads[start] = total - total/2, pads[end] = total/2), computed by a float64 NumPy transposed convolution in the script.

Mechanism: python/tvm/relax/frontend/onnx/onnx_frontend.py, ConvTranspose._impl_v1 never reads "output_shape" (padding=attr.get("pads", 0)) but passes output_padding on to relax.op.nn.conv2d_transpose; Relax's struct-info check (src/relax/op/nn/convolution.cc, InferStructInfoConv2dTranspose) and TOPI (topi/nn/conv2d_transpose.py) require output_padding < strides.

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
