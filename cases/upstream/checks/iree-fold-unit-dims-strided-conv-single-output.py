"""ONNX Conv with one output element along a strided axis (input longer than the window) through iree-compile (llvm-cpu)

Measures, for input 4x2 strides [1, 1] (no unread tail, compiles) and input 4x3 strides [1, 3] (refused), whether
iree-compile accepts the model and the max difference from a float64 reference where it runs.
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


def reference(x, w, strides):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    y = np.zeros((n, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw].astype(np.float64)
            y[:, :, i, j] = np.einsum("nchw,fchw->nf", win, w.astype(np.float64))
    return y


def t(shape):
    return f"!torch.vtensor<[{','.join(map(str, shape))}],f32>"


defect = False
for x_shape, strides in (((1, 1, 4, 2), [1, 1]), ((1, 1, 4, 3), [1, 3])):
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((2, 1, 3, 2)).astype(np.float32)
    expected = reference(x, w, strides)
    asm = f"""module {{
  func.func @main(%x: {t(x.shape)}, %w: {t(w.shape)}) -> {t(expected.shape)} attributes {{torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""}} {{
    %0 = torch.operator "onnx.Conv"(%x, %w) {{torch.onnx.kernel_shape = [3 : si64, 2 : si64], torch.onnx.strides = [{strides[0]} : si64, {strides[1]} : si64]}} : ({t(x.shape)}, {t(w.shape)}) -> {t(expected.shape)}
    return %0 : {t(expected.shape)}
  }}
}}
"""
    label = f"Conv input {list(x_shape)}, kernel [3, 2], strides {strides}, output {list(expected.shape)}"
    try:
        vmfb = tools.compile_str(asm, input_type="auto", extra_args=FLAGS)
    except tools.CompilerToolError as exc:
        first = next((ln.split("error:", 1)[1].strip() for ln in str(exc).splitlines() if "error:" in ln), str(exc).splitlines()[0])
        print(f"{label}: iree-compile refused it: {first[:160]}")
        defect = True
        continue
    y = rt.load_vm_flatbuffer(vmfb, driver="local-task").main(x, w).to_host().astype(np.float64)
    err = np.abs(y - expected).max() if y.shape == expected.shape else float("inf")
    print(f"{label}: got {list(y.shape)}, max |err| {err:.3g}")
    defect |= err > 1e-4
sys.exit(1 if defect else 0)
