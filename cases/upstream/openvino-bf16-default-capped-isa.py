"""[CPU] With ONEDNN_MAX_CPU_ISA below the CPU, compile_model fails ("object is not initialized") at the default bf16 precision instead of falling back to f32

Kind: valid-refused
Ask: a fix: derive the default inference precision (and OPTIMIZATION_CAPABILITIES) from what the capped oneDNN can run, or fail with an error that names the cap.

What happens: On a CPU with AVX512_BF16 (here an AMD Zen 4) and ONEDNN_MAX_CPU_ISA=AVX2, the CPU plugin still reports BF16 among its OPTIMIZATION_CAPABILITIES and bf16 as the default INFERENCE_PRECISION_HINT (FP16 follows the cap, BF16 does not), and compile_model of a plain float32 Conv fails: "Exception from src/inference/src/dev/plugin.cpp:54: object is not initialized". With INFERENCE_PRECISION_HINT f32 the same model compiles and is right. Every float Conv (float64 and float16 models too), every bfloat16 model and channels-last QDQ models with float Transposes fail alike. Capped at AVX512_CORE, oneDNN still runs bf16 and the models compile. A real AVX2 CPU defaults to f32 and is not affected.

Expected: ONEDNN_MAX_CPU_ISA is a documented oneDNN setting (https://uxlfoundation.github.io/oneDNN/dev_guide_cpu_dispatcher_control.html); with it the plugin computes in a precision oneDNN offers, here f32: 9.

Mechanism: not pinned to a line for 2026.4.1: the default precision and the BF16 capability come from a check that ignores the cap, while the capped oneDNN has no bf16 convolution to create.
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
