"""[CPU] With ONEDNN_MAX_CPU_ISA below the CPU, compile_model fails ("object is not initialized") at the default bf16 precision instead of falling back to f32

Kind: valid-refused
Ask: a fix: take the default precision and OPTIMIZATION_CAPABILITIES from what the capped oneDNN can run, or name the cap in the error.

What happens: On an AVX512_BF16 CPU (here AMD Zen 4) with ONEDNN_MAX_CPU_ISA=AVX2, the CPU plugin still reports BF16 in OPTIMIZATION_CAPABILITIES and bf16 as the default INFERENCE_PRECISION_HINT (FP16 follows the cap, BF16 does not), and compile_model of a float32 Conv fails: "object is not initialized". With INFERENCE_PRECISION_HINT f32 it compiles and is right. Every float Conv and bfloat16 model fails alike; capped at AVX512_CORE oneDNN still has bf16 and they compile.

Expected: a precision the capped oneDNN offers (ONEDNN_MAX_CPU_ISA: https://uxlfoundation.github.io/oneDNN/dev_guide_cpu_dispatcher_control.html), here f32: 9.

Mechanism: not pinned to a line for 2026.4.1: the default precision and BF16 capability come from a check that ignores the cap.
"""
import os
os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # oneDNN capped below the CPU
import sys
import numpy as np
import openvino as ov
from onnx import TensorProto, helper, numpy_helper
core = ov.Core()
print("openvino", ov.__version__, "| ONEDNN_MAX_CPU_ISA", os.environ["ONEDNN_MAX_CPU_ISA"], "| default INFERENCE_PRECISION_HINT:", core.get_property("CPU", "INFERENCE_PRECISION_HINT"),
      "| OPTIMIZATION_CAPABILITIES:", core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])], [numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")])
model = core.read_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
for config in ({"INFERENCE_PRECISION_HINT": "f32"}, {}):  # the default configuration last
    try:
        y = core.compile_model(model, "CPU", config)({"x": np.ones((1, 1, 3, 3), np.float32)})[0].item()
    except RuntimeError as exc:
        y = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())[:200]
    print(config or "default config", "-> expected 9.0, got", y)
sys.exit(0 if y == 9.0 else 1)
