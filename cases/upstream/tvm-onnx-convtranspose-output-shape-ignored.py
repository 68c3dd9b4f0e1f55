"""[Relax][Frontend][ONNX] ConvTranspose's output_shape attribute is ignored without a warning: the result is the full, unpadded output

Kind: wrong-value
Ask: support output_shape (pads derived as the operator text says, as the Relay importer did in PR 11076), or raise an error instead of dropping it.

What happens: A ConvTranspose with strides 2, kernel 3 and output_shape [5] over x [1, 2, 3], w [1, 10, 100] imports as R.nn.conv1d_transpose with padding [0, 0] and returns 7 elements, [1, 10, 102, 20, 203, 30, 300], where the model declares 5 and ONNX Runtime 1.32 returns [10, 102, 20, 203, 30]. In 2-D, output_shape 9x9 over 5x5 gives 11x11. A following node of the declared shape then fails at import.

Expected: "output_shape can also be explicitly specified in which case pads values are auto generated" (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html): pads [1, 1] here.

Mechanism: python/tvm/relax/frontend/onnx/onnx_frontend.py, ConvTranspose._impl_v1, never reads output_shape; PR 19450 left it unsupported, silently.

Symptoms:
- output_shape alone: the full, unpadded output
- with output_padding too: longer still; output_padding >= stride refused even where the dilation allows it
"""
import sys
import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm.relax.frontend.onnx import from_onnx
print("tvm", tvm.__version__, "| onnx", onnx.__version__)
x, w = np.array([[[1, 2, 3]]], np.float32), np.array([[[1, 10, 100]]], np.float32)
node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2], output_shape=[5])
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 5])], [numpy_helper.from_array(w, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model, full_check=True)
mod = from_onnx(model)
print(mod.script(show_meta=False))  # the imported Relax module
y = tvm.relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
upsampled = np.kron(x[0, 0], [1, 0])[:5]  # x with a zero between its elements (strides 2): [1, 0, 2, 0, 3]
expected = np.convolve(upsampled, w[0, 0])[1:6]  # the full output, 7 long, cropped by pads [1, 1]
print("expected", expected.tolist(), "\nactual  ", y[0, 0].tolist())
sys.exit(0 if y.shape == (1, 1, 5) and np.array_equal(y[0, 0], expected) else 1)
