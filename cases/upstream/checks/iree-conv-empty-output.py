"""Convolutions and transposed convolutions with an output length of 0 or below through IREE (llvm-cpu)

Measures, per configuration (conv1d input 4 with kernels 5 to 7 and strides 1 to 3, conv_transpose1d whose pads crop
everything), whether iree-compile accepts the model and the shape the module returns, beside the length ONNX shape
inference and PyTorch's formula give.
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
