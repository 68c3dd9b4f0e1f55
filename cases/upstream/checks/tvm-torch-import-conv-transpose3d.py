"""ConvTranspose3d through from_exported_program, and relax.op.nn.conv3d_transpose directly, against float64 references

Measures whether the PyTorch importer accepts ConvTranspose3d (and ConvTranspose1d/2d as controls) and the direct
Relax op's max difference from a float64 reference.
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

C_IN, C_OUT, K, S, L = 2, 3, 2, 2, 3
torch.manual_seed(0)
layer = torch.nn.ConvTranspose3d(C_IN, C_OUT, K, stride=S, bias=False).eval()
x = torch.randn(1, C_IN, L, L, L)
w = layer.weight.detach().numpy()  # (C_in, C_out, k, k, k)


def reference() -> np.ndarray:
    """float64 transposed convolution: each input voxel scatters x * w into a k^3 window at stride S."""
    full = (L - 1) * S + K
    y = np.zeros((1, C_OUT, full, full, full))
    xs = x.numpy().astype(np.float64)
    for d, h, v in np.ndindex(L, L, L):
        y[:, :, d * S:d * S + K, h * S:h * S + K, v * S:v * S + K] += np.einsum("nc,cokab->nokab", xs[:, :, d, h, v], w)
    return y


def run(mod: tvm.IRModule) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x.numpy())).numpy()


ref = reference()
print(f"ConvTranspose3d({C_IN}, {C_OUT}, {K}, stride={S}) on {list(x.shape)}: expected output {list(ref.shape)}")

# the same layer as the Relax op: the op exists and is right
bb = relax.BlockBuilder()
xv = relax.Var("x", relax.TensorType(tuple(x.shape), "float32"))
with bb.function("main", [xv]):
    y = bb.emit(relax.op.nn.conv3d_transpose(xv, relax.const(w), strides=S, data_layout="NCDHW", kernel_layout="IODHW"))
    bb.emit_func_output(y)
try:
    direct = run(bb.get())
    print(f"relax.op.nn.conv3d_transpose: shape {list(direct.shape)}, max |y - ref| = {np.abs(direct - ref).max():.2g}")
except Exception as exc:  # noqa: BLE001 - context only
    print(f"relax.op.nn.conv3d_transpose failed too: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")

try:
    mod = from_exported_program(torch.export.export(layer, (x,)), unwrap_unit_return_tuple=True)
except Exception as exc:  # noqa: BLE001 - the refusal is the defect
    print(f"from_exported_program raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    print("DEFECT: ConvTranspose3d is refused by the PyTorch importer")
    sys.exit(1)
out = run(mod)
bad = out.shape != ref.shape or np.abs(out - ref).max() > 1e-4
print(f"imported model: shape {list(out.shape)}"
      + ("" if out.shape != ref.shape else f", max |y - ref| = {np.abs(out - ref).max():.2g}"))
print("DEFECT: wrong result" if bad else "imported and right")
sys.exit(1 if bad else 0)
