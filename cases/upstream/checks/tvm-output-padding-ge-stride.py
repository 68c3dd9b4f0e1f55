"""ConvTranspose with stride <= output_padding < dilation through TVM: the PyTorch importer and relax.op.nn.conv*_transpose

Measures PyTorch's result (against a float64 reference) and whether from_exported_program and the Relax ops accept
ConvTranspose1d/2d/3d with stride 1, dilation 2, output_padding 1.
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
