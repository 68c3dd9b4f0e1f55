"""Conv with auto_pad SAME_UPPER/SAME_LOWER and dilations > 1 is refused, though the ONNX spec defines it

Kind: valid-refused
Ask: please support dilations with auto_pad SAME_* in the CPU Conv (pad for the dilated kernel, as the explicit pads already work), or say in the operator docs that ONNX Runtime refuses it.

What happens: A Conv with auto_pad SAME_UPPER, dilations [2], kernel 3, length 7 (opset 17) fails in session.run with "Dilation not supported for AutoPadType::SAME_UPPER or AutoPadType::SAME_LOWER"; the same node with the SAME padding written out (pads [2, 2]) runs and is exact. Conv2d/3d, SAME_LOWER and the QDQ form (DequantizeLinear -> Conv -> QuantizeLinear) are refused alike. Reported in #20582 (1.17.3), closed with the check unchanged; still refused by 1.32.0.

Expected: the ONNX Conv text pads so that output = ceil(input / stride), "the padding is split between the two sides"; for a dilated kernel that is total padding (ceil(L/s) - 1) * s + d * (k - 1) + 1 - L = 4 here (https://onnx.ai/onnx/operators/onnx__Conv.html). ONNX shape inference has used the dilated kernel since onnx/onnx#2043, and onnx.reference returns the padded result.

Mechanism: onnxruntime/core/providers/cpu/nn/conv_attributes.h, ComputePadAndOutputShape: ORT_ENFORCE(dilation == 1, ...) in the SAME_UPPER/SAME_LOWER case (line 38 at 00ca168); the pad_needed below it uses kernel, not the dilated kernel dkernel computed above, which the fix would use.
"""
import sys
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
print("onnxruntime", ort.__version__)
ort.set_default_logger_severity(4)  # the error is printed below, once
x, w = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7), np.array([1, 10, 100], np.float32).reshape(1, 1, 3)  # 3 taps, dilation 2: spans 5, so SAME pads 2 and 2
print("expected:", np.correlate(np.pad(x.ravel(), 2), [1, 0, 10, 0, 100]).tolist())
got = {}
for name, pad in (("auto_pad SAME_UPPER", {"auto_pad": "SAME_UPPER"}), ("pads [2, 2]", {"pads": [2, 2]})):
    node = helper.make_node("Conv", ["x", "w"], ["y"], dilations=[2], **pad)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    try:
        got[name] = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0].ravel().tolist()
    except Exception as exc:  # the refusal
        got[name] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1]}"
    print(f"{name}:", got[name])
sys.exit(0 if got["auto_pad SAME_UPPER"] == got["pads [2, 2]"] else 1)
