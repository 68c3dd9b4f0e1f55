"""[TorchOnnxToTorch] onnx.ConvTranspose SAME_UPPER with a kernel shorter than the stride puts the extra output elements at both ends

Project: llvm/torch-mlir (https://github.com/llvm/torch-mlir/issues)
Upstream: none found
Related: https://github.com/microsoft/onnxruntime/issues/11927 (ONNX Runtime's ConvTranspose auto_pad handling); https://github.com/onnx/onnx/issues/3153 (why SAME means input * stride for ConvTranspose)
Checked: 2026-11-28, iree-base-compiler 3.13.0 / iree-base-runtime 3.13.0 (torch-mlir inside), searched llvm/torch-mlir and iree-org/iree issues for "ConvTranspose SAME_UPPER kernel smaller than stride", "negative auto padding ConvTranspose"

What happens: ConvTranspose with auto_pad SAME_UPPER must give an output of input * stride per axis. When the (dilated) kernel is shorter than the stride, the full transposed convolution ((L-1)*s + (k-1)*d + 1) is shorter than that, so s - (k-1)*d - 1 output elements get no input (bias only). iree-compile gives the right length, but puts half of those elements before the data and half after: a 1x2x5 input, 2x3x1 weight (kernel 1), strides 3 gives 1x3x15 with the data starting at index 1 (expected 0), every element shifted by one; max |err| 2.18 on standard-normal data (seed 0). With an odd number of such elements (e.g. kernel 2, stride 3) the node is refused instead ("failed to legalize operation 'torch.operator'").

Expected: TensorFlow's SAME for transposed convolutions (conv2d_transpose / Conv2DTranspose), the convention models with SAME ConvTranspose come from, keeps the data at the start and appends the missing elements at the end. The script's float64 NumPy reference scatters each input element times the kernel at stride 3 and appends the zeros at the end. Note that ONNX's own formula, read literally (pads[begin] = total/2, pads[end] = total - total/2 with total = -2), gives -1 at both ends, which is the placement iree-compile produces; the ONNX reference implementation (onnx 1.17.0) gives the same values. So this is a question of which placement is intended for a negative total; the spec's text does not discuss it.

Mechanism: lib/Conversion/TorchOnnxToTorch/DefaultDomainAtoF.cpp, the "ConvTranspose" pattern, auto_pad branch: totalPadding = stride * (L - 1) + output_padding + (k - 1) * d + 1 - output_shape, negative here, split as (total/2, total - total/2) into torch.aten.convolution's padding (-1 per side); an odd total is rejected as asymmetric.

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
