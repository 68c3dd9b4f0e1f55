"""OpenVINO's CPU plugin refuses a QDQ uint8 depthwise conv3d with a nonzero input zero point at the bf16 default precision

Measures: compile_model of DequantizeLinear -> Conv -> QuantizeLinear for conv1d/2d/3d, depthwise and not, zero
point 7 and 0, at the default precision and with INFERENCE_PRECISION_HINT=f32; the f32 result against exact integer
arithmetic. Exits 1 where the depthwise conv3d is refused, 0 otherwise (an f32-default CPU).
"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import openvino as ov

def model(rank, groups, cin, zp):
    k = [2] * rank
    w = (np.arange(cin // groups * cin * 2 ** rank) % 5 - 2).astype(np.int8).reshape(cin, cin // groups, *k)
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "xs"), numpy_helper.from_array(np.array(zp, np.uint8), "xz"),
             numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0.25, np.float32), "ws"),
             numpy_helper.from_array(np.array(0, np.int8), "wz"),
             numpy_helper.from_array(np.array(1.0, np.float32), "ys"), numpy_helper.from_array(np.array(128, np.uint8), "yz")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"]),
             helper.make_node("Conv", ["xf", "wf"], ["yf"], group=groups, pads=[0] * (2 * rank)),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    shape = [1, cin, *([4] * rank)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    return onnx.helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

core = ov.Core()
refused = False
for hint in (None, "f32"):
  for rank, groups, cin, zp in [(3, 3, 3, 7), (3, 3, 3, 0), (2, 3, 3, 7), (1, 3, 3, 7), (3, 3, 6, 7), (3, 1, 3, 7)]:
    m = core.read_model(model(rank, groups, cin, zp).SerializeToString())
    cfg = {"INFERENCE_PRECISION_HINT": hint} if hint else {}
    try:
        core.compile_model(m, "CPU", cfg); r = "ok"
    except Exception as e:
        r = "FAIL " + [l for l in str(e).splitlines() if "Check" in l or "No suitable" in l][:1].__repr__()
        refused = refused or (hint is None and (rank, groups, cin, zp) == (3, 3, 3, 7))
    print(hint, f"conv{rank}d groups {groups} cin {cin} zp {zp}:", r)
print(ov.__version__, core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
# values under the f32 hint for the failing configuration, against exact integer arithmetic
x = (np.arange(3 * 64) * 7 % 23 + 1).astype(np.uint8).reshape(1, 3, 4, 4, 4)
cm = core.compile_model(core.read_model(model(3, 3, 3, 7).SerializeToString()), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
got = cm(x)[0].astype(int)
w = (np.arange(1 * 3 * 8) % 5 - 2).astype(np.int64).reshape(3, 1, 2, 2, 2)
acc = np.zeros((1, 3, 3, 3, 3))
xi = x.astype(np.int64) - 7
for c in range(3):
    for d in range(3):
        for h in range(3):
            for ww in range(3):
                acc[0, c, d, h, ww] = (xi[0, c, d:d+2, h:h+2, ww:ww+2] * w[c, 0]).sum()
ref = np.clip(np.round(acc * 0.5 * 0.25 / 1.0) + 128, 0, 255)
print("f32 hint max |diff| vs exact:", np.abs(got - ref).max())
sys.exit(1 if refused else 0)
