"""[ONNX] Conv / ConvTranspose with an output length of 0 compiles and returns an empty tensor instead of being refused

Project: llvm/torch-mlir (https://github.com/llvm/torch-mlir/issues)
Upstream: none found
Related: https://github.com/llvm/torch-mlir/issues/352 (TorchToLinalg convolution emits no shape guards); https://github.com/google/XNNPACK/pull/10453 (the same unchecked output-length arithmetic, another stack)
Checked: 2026-11-28, iree-base-compiler 3.13.0 / iree-base-runtime 3.13.0 (torch-mlir inside), onnx 1.17.0; searched llvm/torch-mlir and iree-org/iree issues for "convolution output size zero", "kernel larger than input empty output", "linalg.fill unexpected result less than 0" convolution, "tensor.cast cast incompatible" Conv

What happens: an ONNX Conv whose dilated kernel reaches past the padded input, or a ConvTranspose whose pads crop the whole output, has no output element along that axis. When that length is exactly 0, iree-import-onnx and iree-compile accept the model and the module returns an empty tensor: Conv input 1x2x4, kernel 5 gives shape (1, 3, 0); kernel 7, stride 3 gives (1, 3, 0); ConvTranspose input 1x2x3, kernel 2, stride 2, pads [3, 3] gives (1, 3, 0). The same in 2-D and 3-D, for NCHW and NHWC models, float32, float16, bfloat16 and float64, with bias and epilogue nodes. Negative lengths are refused, but only by accident, with verifier errors from later passes: Conv kernel 6 (length -1) gives "'linalg.fill' op unexpected result less than 0"; length -2 or less fails in the importer ("Unparseable torch type ... !torch.vtensor<[1,3,-2],f32>"); Conv kernel 5, stride 2 (-1 // 2 + 1 = 0 in floor division, 1 in ONNX's truncating shape inference) gives "'tensor.cast' op operand type 'tensor<1x3x0xf32>' and result type 'tensor<1x3x1xf32>' are cast incompatible".

Expected: a clear refusal at import or compile time: all shapes are static, and there is no convolution window to compute. PyTorch's convolution raises ("Kernel size can't be greater than actual input size"), and ONNX Runtime 1.32 refuses both models ("Invalid input shape: {4}", "Computed output dimension is <= 0 for dim 0"). Note that the ONNX operator text does not state a minimum output length, and the ONNX reference implementation (onnx 1.17.0) also returns the empty tensor for a length of 0 (and raises "negative dimensions are not allowed" below it). The script's reference is the output-length formula: (n + pads - d*(k-1) - 1) // s + 1 for Conv, (n-1)*s + d*(k-1) + 1 + output_padding - pads for ConvTranspose.

Mechanism: no step checks the length. iree-import-onnx types each node with ONNX shape inference (onnx/defs/nn/defs.cc convPoolShapeInference and convTransposeShapeInference compute it without a lower bound, the former with C++'s truncating division); torch-mlir's ONNX conversion (lib/Conversion/TorchOnnxToTorch/DefaultDomainAtoF.cpp, Conv and ConvTranspose) maps the node to torch.aten.convolution unchecked, and the TorchToLinalg lowering sizes the result with getOutputDimForConvOps (floor division) or getOutputDimForConvTransposeOps (lib/Conversion/TorchToLinalg/Utils.cpp), again unchecked. A zero-size tensor type is legal MLIR, so a length of 0 goes through; a negative one trips a verifier later, and a quotient where truncating and floor division disagree trips the tensor.cast verifier.

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
C_IN, C_OUT = 2, 3


def import_onnx(model):
    """What iree-import-onnx does: onnx's shape inference, then torch-mlir's ONNX importer."""
    info = onnx_importer.ModelInfo(onnx.shape_inference.infer_shapes(model, data_prop=True))
    module = info.create_module(context=ir.Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    return module.get_asm()


def build(op, n, k, stride, pads):
    w = rng.standard_normal((C_IN, C_OUT, k) if op == "ConvTranspose" else (C_OUT, C_IN, k)).astype(np.float32)
    node = helper.make_node(op, ["x", "w"], ["y"], kernel_shape=[k], strides=[stride], pads=list(pads))
    graph = helper.make_graph([node], "main", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C_IN, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C_OUT, "L"])],
                              initializer=[numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model


def length(op, n, k, stride, pads):
    if op == "ConvTranspose":
        return (n - 1) * stride + k - pads[0] - pads[1]
    return (n + pads[0] + pads[1] - k) // stride + 1


empty = False
for op, n, k, stride, pads in [("Conv", 4, 5, 1, (0, 0)), ("Conv", 4, 7, 3, (0, 0)), ("ConvTranspose", 3, 2, 2, (3, 3)),
                               ("Conv", 4, 6, 1, (0, 0)), ("Conv", 4, 5, 2, (0, 0)), ("ConvTranspose", 3, 2, 2, (4, 4))]:
    label = f"{op} input 1x{C_IN}x{n}, kernel {k}, strides {stride}, pads {list(pads)}: length {length(op, n, k, stride, pads)}"
    x = rng.standard_normal((1, C_IN, n)).astype(np.float32)
    try:
        vmfb = tools.compile_str(import_onnx(build(op, n, k, stride, pads)), input_type="auto", extra_args=FLAGS)
        y = rt.load_vm_flatbuffer(vmfb, driver="local-task").main(x).to_host()
    except Exception as exc:  # noqa: BLE001 - a refusal: the expected outcome, shown with its first error line
        text = str(exc)
        first = next((ln.split("error:", 1)[1].strip() for ln in text.splitlines() if "error:" in ln),
                     text.strip().splitlines()[0] if text.strip() else type(exc).__name__)
        print(f"{label}: refused: {first[:150]}")
        continue
    print(f"{label}: returned an array of shape {tuple(y.shape)}")
    empty |= y.size == 0
if empty:
    print("a model with no output element compiled and returned an empty tensor instead of being refused")
sys.exit(1 if empty else 0)
