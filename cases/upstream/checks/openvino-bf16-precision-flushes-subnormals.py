"""OpenVINO's CPU plugin flushes subnormal inputs and results of an f32 convolution to zero where it defaults to bf16 inference precision

Measures: a one-node f32 ONNX Conv compiled for CPU with the default properties and with INFERENCE_PRECISION_HINT
f32, on a subnormal input with normal products (x = 2^-128, w = 16) and on normal inputs whose products and result
are subnormal (x = w = 2^-65), against the exact values. Exit 1 where the default gives zero (its bf16 kernels:
AVX512_BF16 instructions treat subnormals as zero; the f32 precision keeps them).
"""
import sys

import numpy as np
import openvino as ov
from onnx import TensorProto, helper

print("openvino", ov.__version__)
core = ov.Core()
print("default inference precision:", core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
flushed = False
for what, ex, ew in (("subnormal input, normal result", -128, 4), ("normal inputs, subnormal result", -65, -65)):
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 4, 3, 3], np.full(36, 2.0 ** ew, np.float32).tolist())
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3, 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    x = np.full((1, 4, 5, 5), 2.0 ** ex, np.float32)
    got = {name: float(core.compile_model(core.read_model(model), "CPU", cfg)(x)[0][0, 0, 0, 0])
           for name, cfg in (("default", {}), ("f32", {"INFERENCE_PRECISION_HINT": "f32"}))}
    want = 36 * 2.0 ** ex * 2.0 ** ew
    print(f"float32 {what}: default precision {got['default']!r}, f32 precision {got['f32']!r}, exact {want!r}")
    flushed |= got["default"] == 0.0
sys.exit(1 if flushed else 0)
