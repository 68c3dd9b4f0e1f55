"""[Relax][Frontend][Torch] ConvTranspose3d is refused: "Unsupported transposed convolution dimensionality: 5"

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/pull/18948 (added relax.op.nn.conv3d_transpose and wired the ONNX importer to it, not the PyTorch one)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, torch 2.13.0+cpu, searched apache/tvm issues and PRs for "Unsupported transposed convolution dimensionality", "conv_transpose3d relax torch frontend", "ConvTranspose3d exported program"

What happens: torch.export of an nn.ConvTranspose3d gives aten.convolution.default with transposed=True on a 5-D input; from_exported_program raises "ValueError: Unsupported transposed convolution dimensionality: 5". The same layer written as relax.op.nn.conv3d_transpose (the op TVM already has, and the ONNX importer uses for a 5-D ConvTranspose) compiles and matches a float64 reference to float32 rounding.

Expected: ConvTranspose3d imports like ConvTranspose1d/2d do, to relax.op.nn.conv3d_transpose. The script checks the imported model, and the direct Relax op, against a float64 NumPy transposed convolution.

Mechanism: python/tvm/relax/frontend/torch/base_fx_graph_translator.py, BaseFXGraphImporter._convolution: the transposed branch handles ndim 3 (_conv_transpose1d_impl) and 4 (_conv_transpose2d_impl) and raises for anything else; there is no _conv_transpose3d_impl and no "conv_transpose3d.input" entry in exported_program_translator.py's convert map (which has conv_transpose1d.default and conv_transpose2d.input).

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
