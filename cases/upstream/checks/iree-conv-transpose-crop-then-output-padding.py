"""ConvTranspose with a crop larger than dilation*(kernel-1) and output_padding: IREE (llvm-cpu) against a float64 reference

Measures a 1-D ConvTranspose (input 4, kernel 1, strides 3, pads [1, 1]) with output_padding 1 (right) and 2
(the last element wrong), on standard-normal data: shape, max |error| and where, and channel 0 of both results.
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
L, C_IN, C_OUT, K, S, P = 4, 2, 3, 1, 3, 1


def reference(x, w, out_pad):
    full = np.zeros((1, C_OUT, (L - 1) * S + K + out_pad))  # output_padding: zeros after the full result
    for i in range(L):
        for a in range(K):
            full[:, :, i * S + a] += x[:, :, i].astype(np.float64) @ w[:, :, a].astype(np.float64)
    return full[:, :, P:full.shape[2] - P]


def t(shape):
    return f"!torch.vtensor<[{','.join(map(str, shape))}],f32>"


x = rng.standard_normal((1, C_IN, L)).astype(np.float32)
w = rng.standard_normal((C_IN, C_OUT, K)).astype(np.float32)
defect = False
for out_pad in (1, 2):
    expected = reference(x, w, out_pad)
    asm = f"""module {{
  func.func @main(%x: {t(x.shape)}, %w: {t(w.shape)}) -> {t(expected.shape)} attributes {{torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""}} {{
    %0 = torch.operator "onnx.ConvTranspose"(%x, %w) {{torch.onnx.kernel_shape = [{K} : si64], torch.onnx.output_padding = [{out_pad} : si64], torch.onnx.pads = [{P} : si64, {P} : si64], torch.onnx.strides = [{S} : si64]}} : ({t(x.shape)}, {t(w.shape)}) -> {t(expected.shape)}
    return %0 : {t(expected.shape)}
  }}
}}
"""
    label = f"ConvTranspose L {L}, kernel {K}, strides {S}, pads [{P}, {P}], output_padding {out_pad}"
    try:
        vmfb = tools.compile_str(asm, input_type="auto", extra_args=FLAGS)
        y = rt.load_vm_flatbuffer(vmfb, driver="local-task").main(x, w).to_host().astype(np.float64)
    except Exception as exc:  # a refusal is not this defect, but shown
        print(f"{label}: failed: {str(exc).splitlines()[0][:160]}")
        defect = True
        continue
    err = np.abs(y - expected) if y.shape == expected.shape else None
    print(f"{label}: output {list(y.shape)} (expected {list(expected.shape)})"
          + ("" if err is None else f", max |err| {err.max():.3g} at {tuple(int(i) for i in np.unravel_index(err.argmax(), err.shape))}"))
    if out_pad == 2:
        print("  channel 0 expected:", np.round(expected[0, 0], 3).tolist())
        print("  channel 0 actual:  ", np.round(y[0, 0], 3).tolist())
    defect |= err is None or err.max() > 1e-4
sys.exit(1 if defect else 0)
