"""float64, float16 and bfloat16 PyTorch convolutions through from_exported_program, with and without bias

Measures the returned dtype, the error against a float64 reference beside PyTorch's own, and the import failure with
a bias.
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
