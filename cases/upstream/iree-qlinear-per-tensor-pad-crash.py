"""[TorchOnnxToTorch] QLinearConv with unequal begin/end pads (or auto_pad SAME) crashes iree-compile (SIGSEGV in AtenPadOp::create)

Kind: crash
Ask: a fix: pad a quantized input with its zero point (the real 0) in the Conv pattern's asymmetric-pads branch, instead of passing a null fill value.

What happens: A QLinearConv with one weight scale and pads [1, 0] on a 1x1x3 uint8 input kills iree-compile with SIGSEGV, innermost torch-mlir frame mlir::torch::Torch::AtenPadOp::create. auto_pad SAME_UPPER the same, in 1-D to 3-D. Equal pads, VALID, and per-channel weight scales compile and are exact.

Expected: QLinearConv with the input padded by x_zero_point (https://onnx.ai/onnx/operators/onnx__QLinearConv.html), as with pads [1, 1].

Mechanism: the QLinearConv conversion (DefaultDomainQtoZ.cpp) makes x a !torch.quint8 tensor and rewrites to onnx.Conv, whose pattern (DefaultDomainAtoF.cpp lines 1547-1553, torch-mlir 0029fc2) sets the pad fill value only for IntegerType or FloatType, so AtenPadOp::create (line 1578) gets a null value.
"""
import sys
import iree.compiler as ireec
from iree.compiler.version import VERSION
C = 'torch.operator "onnx.Constant"() {{torch.onnx.value = dense<{}> : tensor<{}>}} : () -> !torch.vtensor<[{}],{}>'.format
S, U, I, X, W, Y = (f"!torch.vtensor<{t}>" for t in ("[],f32", "[],ui8", "[],si8", "[1,1,3],ui8", "[1,1,2],si8", "[1,1,3],ui8"))
MLIR = f"""func.func @main(%x: {X}) -> {Y} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %s = {C("1.0", "f32", "", "f32")}
  %z = {C("128", "ui8", "", "ui8")}
  %wz = {C("0", "si8", "", "si8")}
  %w = {C("[[[1, 2]]]", "1x1x2xsi8", "1,1,2", "si8")}
  %y = torch.operator "onnx.QLinearConv"(%x, %s, %z, %w, %s, %wz, %s, %z) {{torch.onnx.pads = [1 : si64, 0 : si64]}} : ({X}, {S}, {U}, {W}, {S}, {I}, {S}, {U}) -> {Y}
  return %y : {Y}
}}"""
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", VERSION, "| iree-compile model.mlir", " ".join(FLAGS))
try:
    ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS)
except ireec.CompilerToolError as exc:  # iree-compile died; its exit code and the torch-mlir frames of its stack dump
    sys.exit("\n".join(line[:150] for line in str(exc).splitlines() if "Error code" in line or "torch::" in line))  # status 1
print("compiled")
