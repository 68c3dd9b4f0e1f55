"""[TorchToLinalg] A convolution whose output length is 0 compiles and returns an empty tensor instead of being refused

Kind: invalid-accepted
Ask: an error at compile time for a convolution whose output length along an axis is 0 or less, as torch.aten.convolution itself raises.

What happens: An ONNX Conv with a 1x1x4 input and a 1x1x5 kernel (output length 0) compiles for llvm-cpu and returns an empty 1x1x0 tensor; so does a ConvTranspose whose pads crop the whole output. Negative lengths are refused, but by unrelated verifier errors ("'linalg.fill' op unexpected result less than 0"). PyTorch and ONNX Runtime 1.32 refuse both; onnx.reference returns the empty tensor too.

Expected: the error torch.aten.convolution gives ("Kernel size can't be greater than actual input size"; https://pytorch.org/docs/stable/generated/torch.nn.Conv1d.html).

Mechanism: lib/Conversion/TorchToLinalg/Utils.cpp, getOutputDimForConvOps and getOutputDimForConvTransposeOps (torch-mlir 0029fc2), compute the length unchecked; a zero-size tensor is legal MLIR.

Symptoms:
- Conv and ConvTranspose, float and QDQ, 1-D to 3-D: a length-0 output compiles to an empty tensor
- QLinearConv, 2-D: the same (its 1-D and 3-D forms are not lowered)
"""
import sys
from importlib.metadata import version
import iree.compiler as ireec
import iree.runtime as rt
import numpy as np
X, W, Y = "!torch.vtensor<[1,1,4],f32>", "!torch.vtensor<[1,1,5],f32>", "!torch.vtensor<[1,1,0],f32>"
MLIR = f"""func.func @main(%x: {X}, %w: {W}) -> {Y} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %y = torch.operator "onnx.Conv"(%x, %w) : ({X}, {W}) -> {Y}
  return %y : {Y}
}}"""
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", version("iree-base-compiler"), "| iree-compile model.mlir", " ".join(FLAGS))
try:
    y = rt.load_vm_flatbuffer(ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS), driver="local-task").main(np.ones((1, 1, 4), np.float32), np.ones((1, 1, 5), np.float32)).to_host()
except ireec.CompilerToolError as exc:
    y = next(line for line in str(exc).splitlines() if "error:" in line)[:130]  # what iree-compile says
print("input length 4, kernel 5: expected an error | got", y if isinstance(y, str) else f"a tensor of shape {list(y.shape)}")
sys.exit(0 if isinstance(y, str) else 1)
