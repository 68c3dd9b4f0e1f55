"""QLinearConv with full-range uint8 activations is off by up to 91 units on x86 CPUs without VNNI (MLAS int16 pair sums), with no warning at run time

Kind: by-design-undocumented
Ask: a warning when a u8 x s8 convolution with weights beyond 7 bits runs on a CPU without VNNI, or an exact fallback there.

What happens: On an AVX2-only AMD EPYC (onnxruntime 1.32.0, 2026-11-25) 33 of 35 forward QLinearConv models with full-range uint8 activations were off, up to 91 units of y, each equal to the result with adjacent product pairs clipped to int16; for the model below (255 x 127 over 4 channels, y_scale 1000) that gives 66 instead of 130. With AVX512_VNNI, AVX_VNNI or AMX it is exact (as on the CPU below); MLAS decides from CPUID, so no setting shows it on a VNNI CPU.

Expected: exact int32 accumulation (https://onnx.ai/onnx/operators/onnx__QLinearConv.html): 130. The quantization guide (https://onnxruntime.ai/docs/performance/model-optimizations/quantization.html) documents this for ONNX Runtime's own quantizer, not for models from elsewhere.

Mechanism: MLAS's x86 u8 x s8 kernels without VNNI (QgemmU8X8KernelAvx2, the AVX512BW kernel) add adjacent products into a saturating int16 with vpmaddubsw.
"""
import sys
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
flags = next((line.split(":")[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")), [])
print("onnxruntime", ort.__version__, "| CPU VNNI/AMX flags:", sorted(set(flags) & {"avx512_vnni", "avx_vnni", "amx_int8"}) or "none")
init = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in (("s", 1, np.float32), ("ys", 1000, np.float32), ("z", 0, np.uint8), ("w", np.full((2, 4, 1, 1), 127), np.int8), ("wz", 0, np.int8))]
node = helper.make_node("QLinearConv", ["x", "s", "z", "w", "s", "wz", "ys", "z"], ["y"])
graph = helper.make_graph([node], "qlinearconv", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 1, 1])], [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 2, 1, 1])], init)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
y = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": np.full((1, 4, 1, 1), 255, np.uint8)})[0]
print("4 x 255 x 127 / 1000 = 129.5: expected [130, 130], got", y.ravel().tolist())
sys.exit(0 if y.ravel().tolist() == [130, 130] else 1)
