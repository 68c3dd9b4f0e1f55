"""[TorchOnnxToTorch] iree-compile accepts a grouped QLinearConv with a dilation of 0 (3-D) or -1 (any rank)

Kind: invalid-accepted
Ask: a fix: reject a convolution dilation below 1 with a diagnostic, as the ungrouped form already is.

What happens: A per-channel int8 QLinearConv, 4 -> 8 channels in 4 groups, 1x1x1 kernel, dilations [0, 1, 1], compiles and runs, as if that axis had one tap. The same model without groups is refused ("unexpected loop dimension for convolution op"); so are grouped conv1d/conv2d with dilation 0. Grouped conv2d with dilations [-1, 1] compiles too.

Expected: a compile error. ONNX requires dilations >= 1 (https://onnx.ai/onnx/operators/onnx__QLinearConv.html); ONNX Runtime and OpenVINO refuse these models.

Mechanism: no conversion checks that a dilation is at least 1. What refuses the ungrouped model is MLIR's linalg convolution-interface verifier: with a dilation of 0 the kernel loop drops out of the input's indexing map ("unexpected loop dimension for convolution op"). A dilation of -1 keeps that loop, so nothing refuses it; the grouped 3-D form passes with 0 as well.

Symptoms:
QLinearConv (int8 per-channel) with groups: dilation 0 in 3-D, -1 in any rank, compiles and runs.
Float Conv and ConvTranspose in 3-D with groups and a dilation of 0 compile and run (float32, float16, bfloat16).
"""
import sys
import iree.compiler as ireec
from iree.compiler.version import VERSION
C = 'torch.operator "onnx.Constant"() {{torch.onnx.value = dense<{}> : tensor<{}>}} : () -> !torch.vtensor<[{}],{}>'.format
print("iree-base-compiler", VERSION, "| iree-compile model.mlir", " ".join(FLAGS := ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]))
accepted = False
for groups in (1, 4):  # 4 -> 8 channels, a 1x1x1 kernel, dilations [0, 1, 1]
    X, S, U, W, WS, WZ, Y = (f"!torch.vtensor<{t}>" for t in ("[1,4,1,1,1],ui8", "[],f32", "[],ui8", f"[8,{4 // groups},1,1,1],si8", "[8],f32", "[8],si8", "[1,8,1,1,1],ui8"))
    MLIR = f"""func.func @main(%x: {X}) -> {Y} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %s = {C("1.0", "f32", "", "f32")} %z = {C("128", "ui8", "", "ui8")}
  %ws = {C("0.5", "8xf32", "8", "f32")} %wz = {C("0", "8xsi8", "8", "si8")}
  %w = {C("1", f"8x{4 // groups}x1x1x1xsi8", f"8,{4 // groups},1,1,1", "si8")}
  %y = torch.operator "onnx.QLinearConv"(%x, %s, %z, %w, %ws, %wz, %s, %z) {{torch.onnx.group = {groups} : si64, torch.onnx.dilations = [0 : si64, 1 : si64, 1 : si64]}} : ({X}, {S}, {U}, {W}, {WS}, {WZ}, {S}, {U}) -> {Y}
  return %y : {Y} }}"""
    try:
        ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS)
        accepted = print(f"group={groups}, dilations=[0, 1, 1]: compiled (a diagnostic was expected)") or True
    except ireec.CompilerToolError as exc:
        print(f"group={groups}, dilations=[0, 1, 1]: refused:", next((x.strip() for x in str(exc).splitlines() if "error:" in x), "")[:120])
sys.exit(1 if accepted else 0)
