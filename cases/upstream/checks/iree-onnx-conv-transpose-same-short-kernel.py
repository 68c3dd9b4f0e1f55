"""ConvTranspose auto_pad SAME_UPPER with a kernel shorter than the stride (even total padding) through IREE (llvm-cpu)

Measures shape and values against a float64 reference that puts the elements no input reaches at the end (TensorFlow's
SAME), and whether IREE's output is that reference shifted by half of them (the ONNX pads formula read literally).
"""
import importlib.metadata
import sys

import numpy as np
import iree.compiler.tools as tools
import iree.runtime as rt

FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", importlib.metadata.version("iree-base-compiler"), "| target flags:", " ".join(FLAGS))
rng = np.random.default_rng(0)
L, C_IN, C_OUT, K, S = 5, 2, 3, 1, 3


def reference(x, w):
    """float64: each input element times the kernel scattered at stride S, then zeros to L * S at the end."""
    y = np.zeros((1, C_OUT, L * S))
    for i in range(L):
        for a in range(K):
            y[:, :, i * S + a] += x[:, :, i].astype(np.float64) @ w[:, :, a].astype(np.float64)
    return y


def t(shape):
    return f"!torch.vtensor<[{','.join(map(str, shape))}],f32>"


x = rng.standard_normal((1, C_IN, L)).astype(np.float32)
w = rng.standard_normal((C_IN, C_OUT, K)).astype(np.float32)
expected = reference(x, w)
asm = f"""module {{
  func.func @main(%x: {t(x.shape)}, %w: {t(w.shape)}) -> {t(expected.shape)} attributes {{torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""}} {{
    %0 = torch.operator "onnx.ConvTranspose"(%x, %w) {{torch.onnx.auto_pad = "SAME_UPPER", torch.onnx.kernel_shape = [{K} : si64], torch.onnx.strides = [{S} : si64]}} : ({t(x.shape)}, {t(w.shape)}) -> {t(expected.shape)}
    return %0 : {t(expected.shape)}
  }}
}}
"""
try:
    vmfb = tools.compile_str(asm, input_type="auto", extra_args=FLAGS)
except tools.CompilerToolError as exc:
    first = next((ln.split("error:", 1)[1].strip() for ln in str(exc).splitlines() if "error:" in ln), str(exc).splitlines()[0])
    print("iree-compile refused it:", first[:160])
    sys.exit(1)
y = rt.load_vm_flatbuffer(vmfb, driver="local-task").main(x, w).to_host().astype(np.float64)
err = np.abs(y - expected)
print(f"ConvTranspose input {list(x.shape)}, kernel {K}, strides {S}, auto_pad SAME_UPPER: output {list(y.shape)} "
      f"(expected {list(expected.shape)})")
print("channel 0 expected:", np.round(expected[0, 0], 3).tolist())
print("channel 0 actual:  ", np.round(y[0, 0], 3).tolist())
print(f"max |err| {err.max():.3g} at {tuple(int(i) for i in np.unravel_index(err.argmax(), err.shape))}")
shifted = y.shape == expected.shape and np.allclose(y[:, :, 1:], expected[:, :, :-1], atol=1e-5)
if shifted:
    print("the actual output is the expected one shifted right by one element (one bias-only element at each end)")
sys.exit(1 if y.shape != expected.shape or err.max() > 1e-4 else 0)
