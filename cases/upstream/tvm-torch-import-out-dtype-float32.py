"""[Relax][Frontend][Torch] Convolutions are imported with out_dtype="float32": float64/float16/bfloat16 models return float32 or fail to import

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/mlc-ai/relax/pull/165 (the same hard-coded out_dtype in the mlc-ai/relax fork, closed unmerged); https://github.com/apache/tvm/pull/18497 (PyTorch dtype promotion for binary ops in the ExportedProgram frontend)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, torch 2.13.0+cpu, searched apache/tvm issues and PRs for "torch frontend conv out_dtype float32", "from_exported_program float64 conv float32", "Binary operators must have the same datatype conv bias float16"

What happens: from_exported_program translates every aten convolution to relax.op.nn.conv1d/2d/3d (and conv1d/2d_transpose) with out_dtype="float32", whatever the model's dtype. A float64 nn.Conv2d(3, 4, 3, bias=False) imports as a function returning R.Tensor((1, 4, 4, 4), "float32"); the compiled module returns float32, with a relative error of about 1e-7 against a float64 reference (torch's own float64 result: about 1e-16). float16 and bfloat16 models return float32 too. With bias=True the import fails: the converter adds the float32 conv result and the model-dtype bias, and Relax refuses it ("TypeError: Binary operators must have the same datatype for both operands. However, R.add(lv, lv1) uses datatype T.float32 on the LHS ..., and datatype T.float64 on the RHS"), for float64, float16 and bfloat16 alike. No warning is given.

Expected: an imported convolution keeps the model's dtype, as torch.nn.functional.conv2d does (float64 in, float64 out, computed in float64); a bias adds in that dtype. The script compares with a float64 NumPy convolution.

Mechanism: python/tvm/relax/frontend/torch/base_fx_graph_translator.py, BaseFXGraphImporter._conv1d_impl, _conv2d_impl, _conv3d_impl, _conv_transpose1d_impl and _conv_transpose2d_impl all pass out_dtype="float32" to relax.op.nn.conv*; the bias is then added with relax.op.add(conv, reshape(bias)), which requires equal dtypes. Passing out_dtype=x's dtype (or leaving it unset) would keep the model's dtype.

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

torch.manual_seed(0)
x64 = torch.randn(1, 3, 6, 6, dtype=torch.float64)
conv64 = torch.nn.Conv2d(3, 4, 3, dtype=torch.float64).eval()


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """float64 cross-correlation, stride 1, no padding."""
    win = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))  # (n, c, oh, ow, kh, kw)
    y = np.einsum("ncijab,ocab->noij", win, w)
    return y if b is None else y + b.reshape(1, -1, 1, 1)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        import ml_dtypes  # TVM's own dependency, for bfloat16 arrays
        return t.float().numpy().astype(ml_dtypes.bfloat16)
    return t.numpy()


defect = False
for dtype in (torch.float64, torch.float16, torch.bfloat16):
    for bias in (False, True):
        model = torch.nn.Conv2d(3, 4, 3, bias=bias).eval()
        with torch.no_grad():
            model.weight.copy_(conv64.weight)
            if bias:
                model.bias.copy_(conv64.bias)
        model = model.to(dtype)
        x = x64.to(dtype)
        name = f"{str(dtype).split('.')[1]:8s} Conv2d(3, 4, 3, bias={bias})"
        try:
            mod = from_exported_program(torch.export.export(model, (x,)), unwrap_unit_return_tuple=True)
        except Exception as exc:  # noqa: BLE001 - a refused valid model is the defect
            defect = True
            print(f"{name}: from_exported_program raised {type(exc).__name__}: {str(exc).splitlines()[0][:230]}")
            continue
        vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        y = vm["main"](tvm.runtime.tensor(to_numpy(x))).numpy()
        # the reference takes the model's own (rounded) inputs, in float64
        xs, ws = x.double().numpy(), model.weight.detach().double().numpy()
        bs = model.bias.detach().double().numpy() if bias else None
        ref = reference(xs, ws, bs)
        rel = np.abs(y.astype(np.float64) - ref).max() / np.abs(ref).max()
        eager = np.abs(model(x).detach().double().numpy() - ref).max() / np.abs(ref).max()
        print(f"{name}: declared {mod['main'].ret_ty}, returned {y.dtype}, expected {str(dtype).split('.')[1]}; "
              f"max relative error {rel:.2g} (torch eager {eager:.2g})")
        defect = defect or str(y.dtype) != str(dtype).split(".")[1]

print("DEFECT: the importer changes the convolution's dtype" if defect else "dtypes kept")
sys.exit(1 if defect else 0)
