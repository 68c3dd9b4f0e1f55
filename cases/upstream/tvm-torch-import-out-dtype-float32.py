"""[Relax][Frontend][PyTorch] Convolutions are imported with out_dtype="float32" whatever the model's dtype (float64 loses precision, float16 returns float32)

Kind: wrong-value
Ask: a fix: take out_dtype from the input (or leave it unset) in the convolution converters of from_exported_program.

What happens: A float64 torch.nn.Conv1d imported with from_exported_program returns a float32 tensor computed in float32: x = w = 1/3 gives 0.111111119389534 where PyTorch gives 0.1111111111111111 (a float64 Conv2d(3, 4, 3) is 1.9e-7 off, against 4e-16 in PyTorch). float16 and bfloat16 models return float32 too. With a bias the import fails instead: the float32 convolution meets the model-dtype bias in relax.add ("Binary operators must have the same datatype"), for all three dtypes.

Expected: the model's dtype, as PyTorch computes it (https://pytorch.org/docs/stable/generated/torch.nn.Conv1d.html): a float64 result equal to PyTorch's to about 1e-16.

Mechanism: python/tvm/relax/frontend/torch/base_fx_graph_translator.py (main 5d4dc87): _conv_transpose1d_impl, _conv_transpose2d_impl, _conv1d_impl, _conv2d_impl and _conv3d_impl all pass out_dtype="float32" (lines 934, 988, 1040, 1089, 1138), and the bias add that follows keeps the model's dtype.
"""
import sys
import numpy as np
import torch
import tvm
from tvm.relax.frontend.torch import from_exported_program
print("tvm", tvm.__version__, "| torch", torch.__version__)
m = torch.nn.Conv1d(1, 1, 1, bias=False).double()
with torch.no_grad():
    m.weight.fill_(1 / 3)
x = torch.full((1, 1, 1), 1 / 3, dtype=torch.float64)
expected = m(x).detach().numpy()
mod = from_exported_program(torch.export.export(m, (x,)))
y = tvm.relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())["main"](tvm.runtime.tensor(x.numpy()))[0].numpy()
print(f"torch {expected.dtype} {expected.item()!r}\nTVM   {y.dtype} {y.item()!r}")
sys.exit(0 if y.dtype == np.float64 and abs(y.item() - expected.item()) < 1e-15 else 1)
