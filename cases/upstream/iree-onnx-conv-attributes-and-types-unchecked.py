"""[ONNX import] ConvTranspose with strides 0 or negative pads, and Conv with mixed operand types, compile and run instead of being refused

Kind: invalid-accepted
Ask: An error at import or compile time for ONNX Conv/ConvTranspose nodes outside the operator's constraints: a stride below 1, a negative pad, operands of different element types.

What happens: An onnx.ConvTranspose with strides [0, 0] (1x1x2x2 input, 1x1x3x3 weight) compiles for llvm-cpu and returns a (1, 1, 3, 3) tensor; with pads [-1, -1, -1, -1] it also runs. Conv nodes whose operands mix element types (an int64 input and weight with a float64 bias, a float16 or int32 input with a float32 weight, a float32 input with a float64 weight) are imported with each operand converted on its own, then compile and run. ONNX Runtime refuses every one of these models.

Expected: an error. ONNX's ConvTranspose output is "stride[i] * (input_size[i] - 1) + output_padding[i] + ((kernel_shape[i] - 1) * dilations[i] + 1) - pads[start_i] - pads[end_i]", its pads "greater than or equal to 0", and X, W and B share one type T (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html).

Mechanism: torch-mlir's ONNX-to-Torch conversion (lib/Conversion/TorchOnnxToTorch/DefaultDomainAtoF.cpp, the onnx.Conv and onnx.ConvTranspose patterns) checks the lengths of strides and pads ("strides list size does not match the number of axes"), never their values, nor that the operand types agree; TorchToLinalg then lowers what it receives (torch-mlir 0029fc2, vendored by IREE 3.13).
"""
import sys
from importlib.metadata import version
import iree.compiler as ireec
import iree.runtime as rt
import numpy as np
X, W, Y = "!torch.vtensor<[1,1,2,2],f32>", "!torch.vtensor<[1,1,3,3],f32>", "!torch.vtensor<[?,?,?,?],f32>"
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", version("iree-base-compiler"), "| iree-compile model.mlir", " ".join(FLAGS))
accepted = []
for attrs in ("torch.onnx.strides = [0 : si64, 0 : si64]", "torch.onnx.pads = [-1 : si64, -1 : si64, -1 : si64, -1 : si64]"):
    mlir = f"""func.func @main(%x: {X}, %w: {W}) -> {Y} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %y = torch.operator "onnx.ConvTranspose"(%x, %w) {{{attrs}}} : ({X}, {W}) -> {Y}
  return %y : {Y}
}}"""
    try:
        y = rt.load_vm_flatbuffer(ireec.compile_str(mlir, input_type="auto", extra_args=FLAGS), driver="local-task").main(np.ones((1, 1, 2, 2), np.float32), np.ones((1, 1, 3, 3), np.float32)).to_host()
        accepted.append(attrs) or print(f"{attrs}: returned shape {y.shape} (an error was expected)")
    except ireec.CompilerToolError as exc:
        print(f"{attrs}: refused:", next(line for line in str(exc).splitlines() if "error:" in line)[:120])
sys.exit(1 if accepted else 0)
