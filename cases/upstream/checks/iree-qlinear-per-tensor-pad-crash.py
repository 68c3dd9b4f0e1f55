"""QLinearConv (one weight scale) with unequal begin/end pads or auto_pad SAME_UPPER through iree-compile (llvm-cpu)

Measures, for a uint8 2 -> 3 channel 3x3 conv2d with pads [1, 1, 1, 1], [1, 0, 0, 2] and auto_pad SAME_UPPER, whether
iree-compile finishes or dies (by which signal), and the result against exact integer arithmetic where it runs.
"""
import importlib.metadata
import os
import signal
import subprocess
import sys
import tempfile

import numpy as np
import iree.runtime as rt
from iree.compiler.tools.binaries import find_tool

FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", importlib.metadata.version("iree-base-compiler"), "| target flags:", " ".join(FLAGS))
rng = np.random.default_rng(0)
N, C_IN, C_OUT, H, K = 1, 2, 3, 5, 3
X_SCALE, X_ZP, W_SCALE, Y_SCALE, Y_ZP = 0.02, 128, 0.005, 0.05, 120
x = rng.integers(0, 256, size=(N, C_IN, H, H)).astype(np.uint8)
w = rng.integers(-127, 128, size=(C_OUT, C_IN, K, K)).astype(np.int8)
b = rng.integers(-2000, 2000, size=C_OUT).astype(np.int32)


def reference(pads):
    """int64 QLinearConv, pads (top, left, bottom, right) filled with the zero point; requantized half to even."""
    xs = np.pad(x.astype(np.int64) - X_ZP, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    oh, ow = xs.shape[2] - K + 1, xs.shape[3] - K + 1
    acc = np.zeros((N, C_OUT, oh, ow), np.int64)
    for i in range(K):
        for j in range(K):
            acc += np.einsum("nchw,oc->nohw", xs[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.int64))
    acc += b.reshape(1, -1, 1, 1)
    m = float(np.float32(X_SCALE)) * float(np.float32(W_SCALE)) / float(np.float32(Y_SCALE))
    return np.clip(np.rint(acc * m) + Y_ZP, 0, 255)


def const(name, array, ty):
    return (f'    %{name} = torch.operator "onnx.Constant"() {{torch.onnx.value = dense<{array}> : tensor<{ty[1]}>}} '
            f': () -> !torch.vtensor<{ty[0]}>')


def module(attrs, out_hw):
    xt, yt = f"!torch.vtensor<[{N},{C_IN},{H},{H}],ui8>", f"!torch.vtensor<[{N},{C_OUT},{out_hw},{out_hw}],ui8>"
    wt, bt = f"!torch.vtensor<[{C_OUT},{C_IN},{K},{K}],si8>", f"!torch.vtensor<[{C_OUT}],si32>"
    f32, u8, s8 = ("[],f32", "f32"), ("[],ui8", "ui8"), ("[],si8", "si8")
    lines = [const("xs", X_SCALE, f32), const("xz", X_ZP, u8), const("ws", W_SCALE, f32), const("wz", 0, s8),
             const("ys", Y_SCALE, f32), const("yz", Y_ZP, u8),
             const("w", w.tolist(), (f"[{C_OUT},{C_IN},{K},{K}],si8", f"{C_OUT}x{C_IN}x{K}x{K}xsi8")),
             const("b", b.tolist(), (f"[{C_OUT}],si32", f"{C_OUT}xsi32"))]
    types = f"{xt}, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, {wt}, !torch.vtensor<[],f32>, " \
            f"!torch.vtensor<[],si8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>, {bt}"
    return f"""module {{
  func.func @main(%x: {xt}) -> {yt} attributes {{torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""}} {{
{chr(10).join(lines)}
    %y = torch.operator "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %b) {{{attrs}, torch.onnx.kernel_shape = [{K} : si64, {K} : si64], torch.onnx.strides = [1 : si64, 1 : si64]}} : ({types}) -> {yt}
    return %y : {yt}
  }}
}}
"""


def compile_and_run(label, attrs, pads):
    """iree-compile (its own process) and the runtime; True when the defect shows (a crash or wrong values)."""
    expected = reference(pads)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.vmfb")
        done = subprocess.run([find_tool("iree-compile"), "-", *FLAGS, "-o", out], capture_output=True,
                              input=module(attrs, expected.shape[2]).encode())
        err = done.stderr.decode(errors="replace")
        if done.returncode < 0:
            frames = [ln.split(maxsplit=2)[-1].split("(")[0] for ln in err.splitlines()
                      if ln.lstrip().startswith("#") and "mlir::torch::" in ln]
            print(f"{label}: iree-compile died by {signal.Signals(-done.returncode).name}"
                  + (f" in {frames[0]}" if frames else ""))
            return True
        if done.returncode != 0:
            print(f"{label}: iree-compile refused it:",
                  next((ln.split("error:", 1)[1].strip()[:160] for ln in err.splitlines() if "error:" in ln), "?"))
            return True
        y = np.asarray(rt.load_vm_flatbuffer_file(out, driver="local-task").main(x).to_host()).view(np.uint8)
    off = np.abs(y.astype(np.float64) - expected).max()
    print(f"{label}: compiled, output {list(y.shape)}, max |err| {off:g} units of y")
    return off > 1


compile_and_run("control: pads [1, 1, 1, 1] (symmetric)", "torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]",
                (1, 1, 1, 1))
shown = [compile_and_run("pads [1, 1, 0, 0] (top/left only)",
                         "torch.onnx.pads = [1 : si64, 1 : si64, 0 : si64, 0 : si64]", (1, 1, 0, 0)),
         compile_and_run("auto_pad SAME_UPPER (pads 1 each side)", 'torch.onnx.auto_pad = "SAME_UPPER"', (1, 1, 1, 1))]
sys.exit(1 if any(shown) else 0)
