"""[Relax][Frontend][PyTorch] ConvTranspose with stride <= output_padding < dilation, valid in PyTorch, is refused

Kind: valid-refused
Ask: support output_padding < max(stride, dilation) in relax.op.nn.conv{1,2,3}d_transpose and TOPI, as PyTorch does, so that such models import.

What happens: In PyTorch, torch.nn.ConvTranspose1d(1, 1, 2, stride=1, dilation=2, output_padding=1) is valid (x [1, 2, 3], w [1, 10] give [1, 2, 13, 20, 30, 0]), but from_exported_program fails: "ValueError: Conv1dTranspose expects the output padding less than the strides". ConvTranspose2d/3d and R.nn.conv*_transpose itself are refused alike.

Expected: PyTorch allows output_padding smaller than either stride or dilation (https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose1d.html). ONNX's text ("less than the corresponding stride/dilation dimension", onnx/onnx#3187) is ambiguous, and ONNX Runtime 1.32 and onnx.reference refuse the ONNX form, so the ONNX importer's refusal matches them.

Mechanism: src/relax/op/nn/convolution.cc, InferTypeConv1dTranspose (lines 699-703, main 5d4dc87; 2-D line 894, 3-D line 1127) requires output_padding < strides, as do TOPI's conv1d/2d/3d_transpose asserts.
"""
import sys
import numpy as np
import torch
import tvm
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program
print("tvm", tvm.__version__, "| torch", torch.__version__)
m = torch.nn.ConvTranspose1d(1, 1, 2, stride=1, dilation=2, output_padding=1, bias=False)
with torch.no_grad():
    m.weight.copy_(torch.tensor([[[1.0, 10.0]]]))
x = torch.tensor([[[1.0, 2.0, 3.0]]])
expected = m(x).detach().numpy()
try:
    vm = relax.VirtualMachine(tvm.compile(from_exported_program(torch.export.export(m, (x,))), target="llvm"), tvm.cpu())
    y = vm["main"](tvm.runtime.tensor(x.numpy()))[0].numpy()
except Exception as exc:  # the refusal
    y = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1]}"
print("torch", expected[0, 0].tolist(), "\nTVM  ", y if isinstance(y, str) else y[0, 0].tolist())
sys.exit(0 if not isinstance(y, str) and np.array_equal(y, expected) else 1)
