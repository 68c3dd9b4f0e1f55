"""OpenVINO 2026.4.1 rejects an int8-activation QDQ Conv (compile_model raises); the uint8 one compiles to int8 kernels."""
import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto as T
from onnx import helper, numpy_helper


def model(xt, np_x):
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, size=(6, 4, 3, 3)).astype(np.int8)
    inits = [numpy_helper.from_array(a, n) for n, a in [
        ("x_scale", np.float32(0.01)), ("x_zero_point", np_x(3)), ("w", w), ("w_scale", np.float32(0.003)),
        ("w_zero_point", np.int8(0)), ("y_scale", np.float32(0.05)), ("y_zero_point", np_x(-1 if np_x is np.int8 else 128))]]
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zero_point"], ["x_f"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["w_f"]),
             helper.make_node("Conv", ["x_f", "w_f"], ["y_f"], kernel_shape=[3, 3]),
             helper.make_node("QuantizeLinear", ["y_f", "y_scale", "y_zero_point"], ["y"])]
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", xt, [1, 4, 7, 7])],
                          [helper.make_tensor_value_info("y", xt, [1, 6, 5, 5])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]); onnx.checker.check_model(m)
    return m.SerializeToString()
core = ov.Core()
for xt, npx in ((T.UINT8, np.uint8), (T.INT8, np.int8)):
    try:
        c = core.compile_model(core.read_model(model(xt, npx)), "CPU")
        print(npx.__name__, "compiled OK")
    except Exception as e:
        print(npx.__name__, "RAISED:", str(e)[:1500])
