"""iree-import-onnx dies with SIGFPE on an ONNX Conv or QLinearConv with a stride of 0 (onnx's shape inference before 1.23), instead of refusing the model

Kind: crash
Ask: please raise the onnx extra's bound (onnx>=1.16.0) to a release with onnx PR #8051, or check strides before onnx.shape_inference, so that a stride of 0 is an import error.

What happens: iree-import-onnx on a one-node Conv (1x1x5x6 input, 1x1x3x3 weight, strides [1, 0]) kills the process with SIGFPE (integer division by zero) with onnx 1.17.0 installed beside iree-base-compiler 3.13.0; conv1d with strides [0] and conv3d with strides [1, 0, 1] likewise, float32 and int64, and a QLinearConv of every rank (uint8 and int8, grouped too). The importer calls onnx.shape_inference.infer_shapes on the model first (load_onnx_model in iree/compiler/tools/import_onnx/__main__.py), and that call alone dies the same way. With onnx 1.23.2 the shape inference no longer crashes.

Expected: an import error. ONNX's Conv strides are a "stride along each spatial axis" with output length floor((L + pads - dilation * (k - 1) - 1) / stride) + 1 (https://onnx.ai/onnx/operators/onnx__Conv.html), undefined for 0; ONNX Runtime refuses the model.

Mechanism: onnx/defs/nn/defs.cc, convPoolShapeInference (onnx 1.17 to 1.22), which Conv and QLinearConv share, divides by strides[i] unchecked; onnx PR #8051 (merged 2026-06-03; in 1.23.2, not 1.22.0) rejects non-positive strides. iree-base-compiler's onnx extra asks for onnx>=1.16.0.
"""
import sys
import tempfile
from importlib.metadata import version

import onnx
from iree.compiler.tools.import_onnx.__main__ import main, parse_arguments  # what iree-import-onnx runs
from onnx import TensorProto, helper

print("iree-base-compiler", version("iree-base-compiler"), "| onnx", onnx.__version__, flush=True)
graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], strides=[1, 0])], "g", [
    helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 6]), helper.make_tensor_value_info("w", TensorProto.FLOAT, [1, 1, 3, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3, 4])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path := tempfile.mkdtemp() + "/conv.onnx")
try:
    main(parse_arguments([path, "-o", path + ".mlir"]))  # iree-import-onnx conv.onnx -o conv.mlir: SIGFPE here
except Exception as exc:  # any error is the fix
    sys.exit(print("import refused the model:", str(exc).splitlines()[0][:160]))  # exit status 0
print("imported without a crash (an error would be better; no signal)")
