"""ConvTranspose with unequal begin/end pads: IREE (llvm-cpu) against a float64 reference

Measures a 2-D ConvTranspose (1x2x4x4 input, 3x3 kernel, strides 2) with pads [1, 1, 1, 1] (compiles, right) and
[1, 0, 0, 1]: whether iree-compile accepts each, and the max |error| where it runs.
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
X_SHAPE, W_SHAPE, STRIDE = (1, 2, 4, 4), (2, 3, 3, 3), 2


def reference(x, w, pads):
    """float64 ConvTranspose: the full result ((L-1)*s + k per axis), cropped by (begin, end) pads."""
    n, k = x.shape[2:], w.shape[2:]
    full = np.zeros((x.shape[0], w.shape[1], *((m - 1) * STRIDE + kk for m, kk in zip(n, k))))
    for i, j in np.ndindex(*n):
        for a, b in np.ndindex(*k):
            full[:, :, i * STRIDE + a, j * STRIDE + b] += x[:, :, i, j].astype(np.float64) @ w[:, :, a, b].astype(np.float64)
    (hb, wb), (he, we) = pads[:2], pads[2:]
    return full[:, :, hb:full.shape[2] - he, wb:full.shape[3] - we]


def module(pads, out_shape):
    """The torch-dialect function iree-import-onnx writes for one onnx.ConvTranspose node (weights as an argument)."""
    def t(shape):
        return f"!torch.vtensor<[{','.join(map(str, shape))}],f32>"
    return f"""module {{
  func.func @main(%x: {t(X_SHAPE)}, %w: {t(W_SHAPE)}) -> {t(out_shape)} attributes {{torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""}} {{
    %0 = torch.operator "onnx.ConvTranspose"(%x, %w) {{torch.onnx.kernel_shape = [3 : si64, 3 : si64], torch.onnx.pads = [{', '.join(f'{p} : si64' for p in pads)}], torch.onnx.strides = [{STRIDE} : si64, {STRIDE} : si64]}} : ({t(X_SHAPE)}, {t(W_SHAPE)}) -> {t(out_shape)}
    return %0 : {t(out_shape)}
  }}
}}
"""


x = rng.standard_normal(X_SHAPE).astype(np.float32)
w = rng.standard_normal(W_SHAPE).astype(np.float32)
defect = False
for pads in ([1, 1, 1, 1], [1, 0, 0, 1]):
    expected = reference(x, w, pads)
    try:
        vmfb = tools.compile_str(module(pads, expected.shape), input_type="auto", extra_args=FLAGS)
    except tools.CompilerToolError as exc:
        first = next((ln.split("error:", 1)[1].strip() for ln in str(exc).splitlines() if "error:" in ln), str(exc).splitlines()[0])
        print(f"pads {pads}: iree-compile refused it: {first[:160]}")
        defect = True
        continue
    y = rt.load_vm_flatbuffer(vmfb, driver="local-task").main(x, w).to_host()
    err = np.abs(y.astype(np.float64) - expected)
    print(f"pads {pads}: output {list(y.shape)} (expected {list(expected.shape)}), max |err| {err.max():.3g} "
          f"at {tuple(int(i) for i in np.unravel_index(err.argmax(), err.shape))}")
    if y.shape != expected.shape or err.max() > 1e-4:
        defect = True
sys.exit(1 if defect else 0)
