"""[TorchOnnxToTorch] onnx.ConvTranspose with output_padding >= max(stride, dilation) is accepted and lengthens the output

Project: llvm/torch-mlir (https://github.com/llvm/torch-mlir/issues)
Upstream: none found
Related: https://github.com/llvm/torch-mlir/pull/4567 (rejects output_padding >= stride where it is inferred from output_shape, not where it is given); https://github.com/apple/coreai-torch/issues/78 (the same missing check in another converter)
Checked: 2026-11-28, iree-base-compiler 3.13.0 / iree-base-runtime 3.13.0 (torch-mlir inside), onnx 1.17.0; searched llvm/torch-mlir and iree-org/iree issues for "ConvTranspose output_padding greater than stride", "output_padding >= stride", "output padding must be smaller than either stride or dilation"

What happens: an ONNX ConvTranspose with output_padding 1 at stride 1 (input 1x2x3, weight 2x3x2, bias) compiles and runs, and returns a 1x3x5 output (the full transposed convolution, 4 long, plus one element holding the bias only); output_padding 2 at stride 1 gives 1x3x6, output_padding 2 at stride 2 gives 1x3x8. The values are the full transposed convolution extended at the end, where no input reaches, by the bias (exact on integer data), so the model silently produces a longer output than any valid ConvTranspose can. The same for 2-D and 3-D, NCHW and NHWC models, grouped, with pads and with dilation 2 (output_padding 2).

Expected: a refusal. The ONNX operator text says "Each padding value in output_padding must be less than the corresponding stride/dilation dimension"; PyTorch refuses it ("output padding must be smaller than either stride or dilation"), and so does ONNX Runtime 1.32 ("output_padding[0] (1) must be less than max(stride, dilation) (1) for spatial dimension 0"). Neither onnx.checker.check_model (full_check included) nor ONNX shape inference checks it (onnx 1.17.0; onnx main on 2026-08-22 only rejects negative values), so the importer must; the ONNX reference implementation (onnx 1.17.0) refuses such a node with a ValueError from its col2im shape check. The script's float64 NumPy reference is the extension described above (what a lengthened output would have to hold), to show what IREE computes.

Mechanism: lib/Conversion/TorchOnnxToTorch/DefaultDomainAtoF.cpp, the "ConvTranspose" pattern, checks output_padding < stride only for the output_padding it infers from an output_shape attribute ("output_shape would require output_padding >= stride, which violates the ONNX ConvTranspose specification"); the output_padding attribute itself is passed to torch.aten.convolution unchecked, and the TorchToLinalg lowering (lib/Conversion/TorchToLinalg/Linear.cpp, createTransposedInputPadding) pads the strided input by output_padding at the end, whatever its value.

Host: any
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
