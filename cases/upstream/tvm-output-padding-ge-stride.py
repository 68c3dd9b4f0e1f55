"""[Relax] conv*_transpose refuses output_padding >= stride with dilation, which PyTorch and ONNX allow

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/pull/5758 (gave output_padding its PyTorch meaning in Relay and added the < strides check); https://github.com/pytorch/pytorch/issues/8826 (why PyTorch allows output_padding < max(stride, dilation)); https://github.com/onnx/onnx/issues/3187 (ONNX ConvTranspose: "less than the corresponding stride/dilation dimension")
Checked: 2026-11-28, apache-tvm 0.27.0.post1, torch 2.13.0+cpu, searched apache/tvm issues and PRs for "expects the output padding less than the strides", "conv_transpose output_padding dilation", "output_padding stride relax"

What happens: PyTorch accepts output_padding < max(stride, dilation) per axis (ATen's check is "output padding must be smaller than either stride or dilation"), and ONNX's ConvTranspose says less than the stride/dilation. nn.ConvTranspose2d(2, 3, 2, stride=1, dilation=2, output_padding=1) runs in PyTorch (4x4 -> 7x7, equal to a float64 reference). TVM refuses it: from_exported_program raises "ValueError: Conv2dTranspose expects the output padding less than the strides, but the output padding is(1, 1) while the strides are(1, 1)", and relax.op.nn.conv1d_transpose/conv2d_transpose/conv3d_transpose raise the same for 1-D, 2-D and 3-D. The ONNX importer passes the same attributes and is refused the same way.

Expected: output_padding only lengthens the output (L_out = (L - 1) * stride - pad_before - pad_after + dilation * (k - 1) + output_padding + 1); with dilation > stride an output_padding between stride and dilation - 1 is well defined, and PyTorch's and ONNX's models that use it should import. The script checks PyTorch's result against a float64 NumPy transposed convolution, then tries TVM.

Mechanism: src/relax/op/nn/convolution.cc, InferStructInfoConv1dTranspose/Conv2dTranspose/Conv3dTranspose check output_padding < strides only. TOPI asserts the same (python/tvm/topi/nn/conv2d_transpose.py conv2d_transpose_nchw_preprocess, line 87 in 0.27: `assert opad_h < stride_h and opad_w < stride_w`; conv3d_transpose.py line 68), so the lowering needs the same change; its pad-the-dilated-input construction has no need for the limit.

Host: any
"""
import sys
import warnings

import numpy as np
import torch
import tvm
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program

warnings.filterwarnings("ignore")
print("tvm", tvm.__version__, "| torch", torch.__version__)

C_IN, C_OUT, K, S, D, OP, L = 2, 3, 2, 1, 2, 1, 4
torch.manual_seed(0)
layer = torch.nn.ConvTranspose2d(C_IN, C_OUT, K, stride=S, dilation=D, output_padding=OP, bias=False).eval()
x = torch.randn(1, C_IN, L, L)


def reference() -> np.ndarray:
    """float64: each input pixel scatters x * w at stride S, taps dilation D apart; output_padding adds OP at the end."""
    w = layer.weight.detach().numpy().astype(np.float64)  # (C_in, C_out, k, k)
    n_out = (L - 1) * S + D * (K - 1) + 1 + OP
    y = np.zeros((1, C_OUT, n_out, n_out))
    xs = x.numpy().astype(np.float64)
    for i, j, a, b in np.ndindex(L, L, K, K):
        y[:, :, i * S + a * D, j * S + b * D] += xs[:, :, i, j] @ w[:, :, a, b]
    return y


ref = reference()
with torch.no_grad():
    eager = layer(x).double().numpy()
print(f"ConvTranspose2d({C_IN}, {C_OUT}, {K}, stride={S}, dilation={D}, output_padding={OP}) on {list(x.shape)}: "
      f"torch {list(eager.shape)}, reference {list(ref.shape)}, max |torch - ref| = {np.abs(eager - ref).max():.2g}")

refused = []
try:
    mod = from_exported_program(torch.export.export(layer, (x,)), unwrap_unit_return_tuple=True)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    y = vm["main"](tvm.runtime.tensor(x.numpy())).numpy()
    ok = y.shape == ref.shape and np.abs(y - ref).max() < 1e-4
    print(f"from_exported_program: output {list(y.shape)}" + ("" if y.shape != ref.shape else
          f", max |y - ref| = {np.abs(y - ref).max():.2g}"))
    if not ok:
        refused.append("torch importer: wrong result")
except Exception as exc:  # noqa: BLE001 - the refusal is the defect
    refused.append("torch importer")
    print(f"from_exported_program raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")

for rank, op in ((1, relax.op.nn.conv1d_transpose), (2, relax.op.nn.conv2d_transpose), (3, relax.op.nn.conv3d_transpose)):
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorType((1, C_IN) + (L,) * rank, "float32"))
    w = relax.const(np.ones((C_IN, C_OUT) + (K,) * rank, np.float32))
    try:
        with bb.function("main", [xv]):
            bb.emit_func_output(bb.emit(op(xv, w, strides=S, dilation=D, output_padding=OP)))
        print(f"relax.op.nn.conv{rank}d_transpose: returns {bb.get()['main'].ret_ty}")
    except Exception as exc:  # noqa: BLE001 - the refusal is the defect
        refused.append(f"conv{rank}d_transpose")
        print(f"relax.op.nn.conv{rank}d_transpose(strides={S}, dilation={D}, output_padding={OP}) raised "
              f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}")

print(f"DEFECT: refused by {', '.join(refused)}" if refused else "accepted")
sys.exit(1 if refused else 0)
