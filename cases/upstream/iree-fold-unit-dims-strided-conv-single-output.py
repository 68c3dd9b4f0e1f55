"""[DispatchCreation] FoldUnitExtentDims breaks a strided convolution with one output element: 'linalg.generic' op inferred input/output operand dimension mismatch

Project: iree-org/iree (https://github.com/iree-org/iree/issues)
Upstream: none found
Related: https://github.com/iree-org/iree/issues/18387 (a different conv operand-dimension verifier error, closed)
Checked: 2026-11-28, iree-base-compiler 3.13.0 / iree-base-runtime 3.13.0, searched iree-org/iree issues for FoldUnitExtentDims convolution, "inferred input/output operand" conv stride unit dim, and llvm/llvm-project for drop unit dims convolution

What happens: an ONNX Conv (imported by iree-import-onnx) with input 1x1x4x3, weight 2x1x3x2, strides [1, 3], no padding, has a 1x2x2x1 output: one output column, and the input's third column is never read. iree-compile (llvm-cpu) fails with "error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #2 to be 3, but found 2". The same conv with stride [1, 1] on a 4x2 input (no unread tail) compiles and matches; so does kernel width 1. It shows for conv1d, conv2d and conv3d, NCHW and NHWC models alike (with padding or a dilation along that axis some such convolutions compile; that boundary is not measured).

Expected: the convolution's output, 1x2x2x1 (PyTorch/ONNX semantics: out = floor((W - k) / s) + 1 = 1, the tail beyond the window ignored); the script computes it in float64 NumPy.

Mechanism: with --mlir-print-ir-after-failure the failing pass is FoldUnitExtentDimsPass (iree-dispatch-creation-fold-unit-extent-dims). It drops the unit output dimension of the convolution's linalg.generic; the input's access map (ow * 3 + kw) becomes kw, but the input operand keeps its full width 3 while the loop over kw has extent 2, so the rewritten op no longer verifies. Extracting the window (width d * (k - 1) + 1) from the input before dropping the dimension, or not dropping output dims whose input access has a stride, would keep it valid.

Host: any
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
