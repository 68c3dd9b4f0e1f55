"""[Relax][Frontend][PyTorch] Support ConvTranspose3d in from_exported_program: "Unsupported transposed convolution dimensionality: 5"

Kind: valid-refused
Ask: a feature: import 3-D transposed convolutions through relax.op.nn.conv3d_transpose, which exists and which the ONNX importer already uses.

What happens: Importing torch.nn.ConvTranspose3d with from_exported_program (any shape; here 1 -> 1 channel, kernel 2, input 1x1x2x2x2) raises "ValueError: Unsupported transposed convolution dimensionality: 5". ConvTranspose1d and ConvTranspose2d import and are right.

Expected: the module imports, and the result equals PyTorch's (a 3x3x3 output here). relax.op.nn.conv3d_transpose called directly matches a float64 reference to 4e-8.

Mechanism: python/tvm/relax/frontend/torch/base_fx_graph_translator.py, BaseFXGraphImporter._convolution (lines 1182-1206, main 5d4dc87), handles transposed=True for 3-D and 4-D inputs only, and there is no _conv_transpose3d_impl (nor conv_transpose3d.input in the convert map); PR 18948 added conv3d_transpose for the ONNX importer only.
"""
import sys
import numpy as np
import torch
import tvm
from tvm.relax.frontend.torch import from_exported_program
print("tvm", tvm.__version__, "| torch", torch.__version__)
m = torch.nn.ConvTranspose3d(1, 1, 2, bias=False)
with torch.no_grad():
    m.weight.copy_(torch.arange(1.0, 9.0).reshape(1, 1, 2, 2, 2))
x = torch.ones(1, 1, 2, 2, 2)
expected = m(x).detach().numpy()
try:
    mod = from_exported_program(torch.export.export(m, (x,)))
    y = tvm.relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())["main"](tvm.runtime.tensor(x.numpy()))[0].numpy()
except Exception as exc:  # the refusal
    y = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1]}"
print("torch", list(expected.shape), expected[0, 0, 0].tolist(), "\nTVM  ", y if isinstance(y, str) else y[0, 0, 0].tolist())
sys.exit(0 if not isinstance(y, str) and np.allclose(y, expected) else 1)
