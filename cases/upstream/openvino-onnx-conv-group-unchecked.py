"""[ONNX FE] Conv with group=0 or group=-1 is accepted and runs as an ungrouped convolution instead of being rejected

Kind: invalid-accepted
Ask: An error at read_model/compile_model for a Conv (and ConvTranspose) whose group is below 1 or does not divide the channel counts, as ONNX Runtime gives.

What happens: An ONNX Conv node with group=0 (or group=-1), a 1x2x4x4 input and a 3x2x3x3 weight, is read and compiled by the CPU plugin and returns a (1, 3, 2, 2) tensor equal to the group=1 result. ONNX Runtime 1.32 refuses both models ("Input channels C is not equal to kernel channels * group. C: 2 kernel channels: 2 group: 0").

Expected: an error. The ONNX Conv operator says "group: number of groups input channels and output channels are divided into" and requires the weight to have shape (M x C/group x kH x kW) (https://onnx.ai/onnx/operators/onnx__Conv.html), so C = kernel channels * group.

Mechanism: src/frontends/onnx/frontend/src/op/conv.cpp (detail::conv) reads the group attribute with no check and builds a plain v1::Convolution unless group > 1; conv_transpose.cpp checks only group >= 0, so group 0 takes the same path. The ngraph importer checked it until ngraph PR 4487 left the check to shape inference, which never sees the attribute.
"""
import sys
import tempfile
import numpy as np
import onnx
import openvino as ov
from onnx import TensorProto, helper
print("openvino", ov.__version__)
x, w = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) % 5, np.ones((3, 2, 3, 3), np.float32)
out = {}
for group in (1, 0, -1):
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], group=group)], "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape), helper.make_tensor_value_info("w", TensorProto.FLOAT, w.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path := tempfile.mkdtemp() + "/conv.onnx")
    try:
        out[group] = ov.Core().compile_model(path, "CPU")([x, w])[0]  # group 0 and -1: an error expected here
    except RuntimeError as exc:
        sys.exit(print(f"group={group}: refused, as expected:", str(exc).splitlines()[0][:120]))  # exit status 0
    print(f"group={group}: returned shape {out[group].shape}, first row {out[group][0, 0, 0].tolist()}")
sys.exit(print("group 0 and -1 accepted (an error was expected); equal to group=1:", all(np.array_equal(out[g], out[1]) for g in (0, -1))) or 1)
