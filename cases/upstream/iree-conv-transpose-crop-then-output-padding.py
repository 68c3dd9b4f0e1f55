"""[TorchToLinalg] ConvTranspose with pads above dilation*(kernel-1) and output_padding reads one element past its padded input

Kind: wrong-value
Ask: a fix: size the buffer in createTransposedInputPadding for the crop offset plus the output length.

What happens: An ONNX ConvTranspose with input 1x2x4, weight 2x1x1, strides 3, pads [1, 1], output_padding 2 compiles for llvm-cpu with the right shape, 1x1x10, but its last element, which no input reaches, is 10, not 0. 10 is channel 1's first input: channel 0 reads one element past its row, and channel 1 past the whole buffer (whatever follows; 0 here). Output_padding 1 or pads [0, 0] give the right result; 2-D axes fail alike (up to 6 off).

Expected: the ConvTranspose output (https://onnx.ai/onnx/operators/onnx__ConvTranspose.html): the full transposed result cropped by the pads, then output_padding elements that no input reaches: [0, 0, 2002, 0, 0, 3003, 0, 0, 4004, 0].

Mechanism: lib/Conversion/TorchToLinalg/Linear.cpp, createTransposedInputPadding (lines 1706-1738, torch-mlir 0029fc2): for an effective padding d*(k-1)-p = -1 it inserts the strided input into a buffer of max(innerSize, outerSize) = 10 elements, then extracts 10 from offset 1: index 10 is past the end. It needs max(innerSize, outerSize + crop). PR 4650 fixed the same in the TOSA lowering.
"""
import sys
from importlib.metadata import version
import iree.compiler as ireec
import iree.runtime as rt
import numpy as np
T = "!torch.vtensor<[{}],f32>".format
MLIR = f"""func.func @main(%x: {T("1,2,4")}, %w: {T("2,1,1")}) -> {T("1,1,10")} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %y = torch.operator "onnx.ConvTranspose"(%x, %w) {{torch.onnx.output_padding = [2 : si64], torch.onnx.pads = [1 : si64, 1 : si64], torch.onnx.strides = [3 : si64]}} : ({T("1,2,4")}, {T("2,1,1")}) -> {T("1,1,10")}
  return %y : {T("1,1,10")}
}}"""
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", version("iree-base-compiler"), "| iree-compile model.mlir", " ".join(FLAGS))
x = np.array([[[1, 2, 3, 4], [10, 20, 30, 40]]], np.float32)
w = np.array([[[1]], [[100]]], np.float32)
full = np.zeros(12)  # (4-1)*3 + 1 + output_padding 2 long; input i lands at 3*i
full[0:10:3] = w[:, 0, 0] @ x[0]
expected = full[1:11]  # cropped by pads [1, 1]
y = rt.load_vm_flatbuffer(ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS), driver="local-task").main(x, w).to_host()
print("expected", expected.tolist(), "\nactual  ", y[0, 0].tolist())
sys.exit(1 if not np.array_equal(y[0, 0], expected) else 0)
