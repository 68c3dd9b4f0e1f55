"""[Relax][Frontend][PyTorch] ConvTranspose with stride <= output_padding < dilation, valid in PyTorch, is refused

Kind: valid-refused
Ask: support output_padding < max(stride, dilation) in relax.op.nn.conv{1,2,3}d_transpose and TOPI, as PyTorch does, so that such models import.

What happens: In PyTorch, torch.nn.ConvTranspose1d(1, 1, 2, stride=1, dilation=2, output_padding=1) is valid (x [1, 2, 3], w [1, 10] give [1, 2, 13, 20, 30, 0]), but from_exported_program fails with "ValueError: Conv1dTranspose expects the output padding less than the strides, but the output padding is(1,) while the strides are(1,)". ConvTranspose2d/3d, and relax.op.nn.conv*_transpose called directly, are refused the same way.

Expected: PyTorch allows an output_padding smaller than either the stride or the dilation (aten: "output padding must be smaller than either stride or dilation"; https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose1d.html). The extra elements extend the output at the end, here one that no input reaches (0, or the bias). ONNX is less clear: its text says "less than the corresponding stride/dilation dimension" (https://github.com/onnx/onnx/issues/3187 asks what the slash means), and ONNX Runtime 1.32 and onnx.reference both refuse the ONNX form of this model, so the ONNX importer's refusal matches them.

Mechanism: src/relax/op/nn/convolution.cc, InferStructInfoConv1dTranspose (lines 699-703 on main 5d4dc87; Conv2dTranspose line 894, Conv3dTranspose line 1127) requires output_padding < strides, and TOPI asserts the same (python/tvm/topi/nn/conv1d_transpose.py line 73, conv2d_transpose.py line 87, conv3d_transpose.py line 68).
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
