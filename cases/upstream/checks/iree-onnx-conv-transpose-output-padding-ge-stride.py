"""ConvTranspose with output_padding >= max(stride, dilation) through IREE (llvm-cpu)

Measures, for 1-D configurations (input 3, kernel 2; strides 1 and 2; output_padding up to 3; dilation 2; pads), whether
iree-compile accepts the model, the output length, and the values against the float64 transposed convolution extended
at the end.
"""
import importlib.metadata
import sys

import iree.compiler.tools as tools
import iree.runtime as rt
import numpy as np
import onnx
from iree.compiler import ir
from iree.compiler.extras import onnx_importer
from onnx import TensorProto, helper, numpy_helper

FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", importlib.metadata.version("iree-base-compiler"), "| onnx", onnx.__version__,
      "| target flags:", " ".join(FLAGS))
rng = np.random.default_rng(0)
L, C_IN, C_OUT, K = 3, 2, 3, 2


def import_onnx(model):
    """What iree-import-onnx does: onnx's shape inference, then torch-mlir's ONNX importer."""
    info = onnx_importer.ModelInfo(onnx.shape_inference.infer_shapes(model, data_prop=True))
    module = info.create_module(context=ir.Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    return module.get_asm()


def extended(x, w, b, stride, out_pad):
    """float64: the full transposed convolution, then out_pad elements holding the bias only at the end."""
    y = np.zeros((1, C_OUT, (L - 1) * stride + K + out_pad))
    for i in range(L):
        for a in range(K):
            y[:, :, i * stride + a] += x[:, :, i].astype(np.float64) @ w[:, :, a].astype(np.float64)
    return y + b.astype(np.float64)[None, :, None]


x = rng.integers(-3, 4, (1, C_IN, L)).astype(np.float32)
w = rng.integers(-3, 4, (C_IN, C_OUT, K)).astype(np.float32)
b = rng.integers(-3, 4, (C_OUT,)).astype(np.float32)
accepted = False
for stride, out_pad in [(1, 1), (1, 2), (2, 2)]:
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[K], strides=[stride],
                            output_padding=[out_pad])
    graph = helper.make_graph([node], "main", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C_IN, L])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C_OUT, "L"])],
                              initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    label = f"ConvTranspose input 1x{C_IN}x{L}, kernel {K}, strides {stride}, output_padding {out_pad}"
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as exc:  # noqa: BLE001 - shown: onnx itself refusing is a change worth knowing
        print(f"{label}: onnx.checker refuses it: {str(exc).splitlines()[0][:150]}")
    try:
        vmfb = tools.compile_str(import_onnx(model), input_type="auto", extra_args=FLAGS)
        y = rt.load_vm_flatbuffer(vmfb, driver="local-task").main(x).to_host().astype(np.float64)
    except Exception as exc:  # noqa: BLE001 - a refusal: the expected outcome, shown with its first error line
        text = str(exc)
        first = next((ln.split("error:", 1)[1].strip() for ln in text.splitlines() if "error:" in ln),
                     text.strip().splitlines()[0] if text.strip() else type(exc).__name__)
        print(f"{label}: refused: {first[:150]}")
        continue
    accepted = True
    ref = extended(x, w, b, stride, out_pad)
    same = y.shape == ref.shape and np.array_equal(y, ref)
    print(f"{label}: accepted, output {list(y.shape)} (the longest valid output_padding, {stride - 1}, gives "
          f"{(L - 1) * stride + K + stride - 1}); equal to the extended transposed convolution: {same}")
    print("  bias per channel:", b.tolist(), "| the last", out_pad, "element(s) per channel (no input reaches them):",
          y[0, :, -out_pad:].tolist())
if accepted:
    print("output_padding >= max(stride, dilation) was accepted instead of refused")
sys.exit(1 if accepted else 0)
