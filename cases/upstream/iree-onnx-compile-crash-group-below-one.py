"""[TorchToLinalg] iree-compile dies with SIGFPE on an ONNX Conv with group=0, instead of emitting a diagnostic

Kind: crash
Ask: A fix: ConvertAtenConvolutionOp (or the onnx.Conv to torch.aten.convolution conversion) should reject groups < 1 with a diagnostic instead of dividing by it.

What happens: iree-compile dies on a one-node ONNX Conv (1x1x5x6 input, 1x1x3x3 weight) with torch.onnx.group = 0: SIGFPE (exit code -8), its stack in (anonymous namespace)::ConvertAtenConvolutionOp::matchAndRewrite. The same holds for conv1d/conv3d and ConvTranspose, float32 and int64. group = -1 gets an unrelated verifier error here ("'tensor.expand_shape' op expected number of static shape dims to be equal to the output rank (5)") and SIGSEGV on other shapes. ONNX Runtime refuses the model ("Input channels C is not equal to kernel channels * group").

Expected: a compile error. ONNX's Conv requires the weight to be (M x C/group x kH x kW) (https://onnx.ai/onnx/operators/onnx__Conv.html), and torch.nn.functional.conv2d raises "non-positive groups is not supported".

Mechanism: lib/Conversion/TorchToLinalg/Linear.cpp (torch-mlir 0029fc2, vendored by IREE 3.13), ConvertAtenConvolutionOp::matchAndRewrite: numGroups is read from the constant (line 947) and never checked to be >= 1; the grouped path then divides the static channel counts by it (inShape[i] / numGroups, line 1463); the runtime channels % groups check it emits (line 1003) comes too late.
"""
import sys
from importlib.metadata import version

import iree.compiler as ireec

X, W, Y = "!torch.vtensor<[1,1,5,6],f32>", "!torch.vtensor<[1,1,3,3],f32>", "!torch.vtensor<[1,1,3,4],f32>"
MLIR = f"""func.func @main(%x: {X}, %w: {W}) -> {Y} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %y = torch.operator "onnx.Conv"(%x, %w) {{torch.onnx.group = 0 : si64}} : ({X}, {W}) -> {Y}
  return %y : {Y}
}}"""
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu"]
print("iree-base-compiler", version("iree-base-compiler"), "| iree-compile model.mlir", " ".join(FLAGS))
try:
    ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS)
    sys.exit(print("group=0: compiled (a diagnostic was expected)") or 1)
except ireec.CompilerToolError as exc:
    lines = str(exc).splitlines()
    code = int(next(line for line in lines if line.startswith("Error code:")).split(":")[1])
    print(f"group=0: iree-compile exit code {code}:", "killed by a signal" if code < 0 else next(x for x in lines if "error:" in x)[:160])
sys.exit(1 if code < 0 else 0)
