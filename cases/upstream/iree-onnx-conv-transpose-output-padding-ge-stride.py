"""[TorchOnnxToTorch] onnx.ConvTranspose with output_padding not below max(stride, dilation) is accepted and lengthens the output

Kind: invalid-accepted
Ask: an error for output_padding >= max(stride, dilation), as PyTorch, ONNX Runtime and onnx.reference give, and as the output_shape path already checks.

What happens: An ONNX ConvTranspose over a length-3 input, kernel 2, strides 1, output_padding 1 compiles for llvm-cpu and returns 5 elements: the full result, then one element no input reaches. output_padding 2 at strides 2, 2-D, 3-D, grouped and quantized models the same.

Expected: "Each padding value in output_padding must be less than the corresponding stride/dilation dimension" (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html); PyTorch, ONNX Runtime 1.32 and onnx.reference refuse it.

Mechanism: lib/Conversion/TorchOnnxToTorch/DefaultDomainAtoF.cpp, ConvTranspose pattern (torch-mlir 0029fc2): output_padding is read unchecked (line 1869); only one inferred from output_shape is checked (line 1921, PR 4567).
"""
import sys
from importlib.metadata import version
import iree.compiler as ireec
import iree.runtime as rt
import numpy as np
X, W, Y = "!torch.vtensor<[1,1,3],f32>", "!torch.vtensor<[1,1,2],f32>", "!torch.vtensor<[1,1,5],f32>"
MLIR = f"""func.func @main(%x: {X}, %w: {W}) -> {Y} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %y = torch.operator "onnx.ConvTranspose"(%x, %w) {{torch.onnx.output_padding = [1 : si64]}} : ({X}, {W}) -> {Y}
  return %y : {Y}
}}"""
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", version("iree-base-compiler"), "| iree-compile model.mlir", " ".join(FLAGS))
try:
    y = rt.load_vm_flatbuffer(ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS), driver="local-task").main(np.array([[[1, 2, 3]]], np.float32), np.array([[[1, 10]]], np.float32)).to_host()
except ireec.CompilerToolError as exc:
    y = next(line for line in str(exc).splitlines() if "error:" in line)[:130]  # what iree-compile says
print("strides 1, output_padding 1: expected an error | got", y if isinstance(y, str) else f"{y[0, 0].tolist()}")
sys.exit(0 if isinstance(y, str) else 1)
