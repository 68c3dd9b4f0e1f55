"""[TorchOnnxToTorch] Support onnx.ConvTranspose with different begin and end pads (today: "failed to legalize operation 'torch.operator'")

Kind: valid-refused
Ask: a feature: lower unequal pads as the symmetric min(begin, end) followed by a slice of the difference, or at least an error that says why.

What happens: iree-compile refuses an ONNX ConvTranspose whose pads differ at the two ends of an axis (1-D, input 3, kernel 3, pads [2, 0]) with only "failed to legalize operation 'torch.operator' that was explicitly marked illegal", no reason. auto_pad SAME_UPPER/SAME_LOWER with an odd total padding (kernel 3, strides 2: a common 2x upsampling) likewise. Measured in 1-D to 3-D, NCHW and NHWC, float32 and float64. Equal pads are right; ONNX Runtime 1.32 and onnx.reference run both.

Expected: pads [x1_begin, x2_begin, ..., x1_end, x2_end, ...] may differ per side (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html); here the full transposed result [1, 12, 123, 230, 300] with 2 elements cropped at the start: [123, 230, 300].

Mechanism: lib/Conversion/TorchOnnxToTorch/DefaultDomainAtoF.cpp, the ConvTranspose pattern (torch-mlir 0029fc2): lines 2008-2013 fail the match with "padding values for the beginning and ending along each spatial axis must be equal", lines 1973-1979 with "... auto-padding to produce asymmetric padding which isn't currently supported", both TODO, as torch.aten.convolution takes one padding per axis. The Conv pattern already puts a torch.aten.pad in front.
"""
import sys
from importlib.metadata import version
import iree.compiler as ireec
import iree.runtime as rt
import numpy as np
V = "!torch.vtensor<[1,1,3],f32>"  # input, weight and output: 1x1x3
MLIR = f"""func.func @main(%x: {V}, %w: {V}) -> {V} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %y = torch.operator "onnx.ConvTranspose"(%x, %w) {{torch.onnx.pads = [2 : si64, 0 : si64]}} : ({V}, {V}) -> {V}
  return %y : {V}
}}"""
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", version("iree-base-compiler"), "| iree-compile model.mlir", " ".join(FLAGS))
x, w = np.array([[[1, 2, 3]]], np.float32), np.array([[[1, 10, 100]]], np.float32)
expected = np.convolve(x[0, 0], w[0, 0])[2:]  # the full transposed result, 2 cropped at the start, 0 at the end
try:
    y = rt.load_vm_flatbuffer(ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS), driver="local-task").main(x, w).to_host()
except ireec.CompilerToolError as exc:
    y = next(line for line in str(exc).splitlines() if "error:" in line)[:130]  # what iree-compile says
print("expected", expected.tolist(), "\nactual  ", y if isinstance(y, str) else y[0, 0].tolist())
sys.exit(0 if not isinstance(y, str) and np.array_equal(y[0, 0], expected) else 1)
