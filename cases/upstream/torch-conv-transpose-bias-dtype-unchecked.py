"""F.conv_transpose1d/2d accept a bias whose dtype differs from the input's, where F.conv1d/2d/3d raise

Kind: invalid-accepted
Ask: please make conv_transpose1d/2d/3d raise "Input type (...) and bias type (...) should be the same" as conv1d/2d/3d do, instead of casting the bias.

What happens: on CPU with torch 2.13.0 (and 2.14.1), F.conv_transpose1d with a float64 input and weight and a float32 bias returns a float64 result of shape (1, 4, 9), and F.conv_transpose2d alike. F.conv1d on the same tensors raises "Input type (double) and bias type (float) should be the same", and F.conv_transpose3d raises "expected scalar type Double but found Float" from its kernel.

Expected: the error the forward convolutions give for the same tensors. The functional docs (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv_transpose1d.html) name no cast of the bias, and the three ranks should agree.

Mechanism: conv1d_symint, conv2d_symint and conv3d_symint in aten/src/ATen/native/Convolution.cpp check bias.dtype() == input.dtype() before at::convolution; conv_transpose1d/2d/3d_symint call at::convolution_symint without that check, and the CPU transposed kernel for 1-D/2-D then adds the bias in the input's dtype.

Symptoms:
float16, float32 or float64 input, bias of another dtype: conv_transpose1d/2d return an output.
bfloat16 input, bias of another dtype, a CPU without oneDNN's bfloat16 kernels (AVX2): the same.
"""
import sys
import torch
import torch.nn.functional as F
print("torch", torch.__version__)
x, w = torch.arange(1.0, 8.0, dtype=torch.float64).reshape(1, 1, 7), torch.ones(1, 4, 3, dtype=torch.float64)
b = torch.ones(4, dtype=torch.float32)  # float32 bias, float64 input and weight
accepted = False
for name, call in (("conv1d", lambda: F.conv1d(x, w.transpose(0, 1), b)),
                   ("conv_transpose1d", lambda: F.conv_transpose1d(x, w, b)),
                   ("conv_transpose2d", lambda: F.conv_transpose2d(x[..., None], w[..., None], b)),
                   ("conv_transpose3d", lambda: F.conv_transpose3d(x[..., None, None], w[..., None, None], b))):
    try:
        y = call()
        accepted |= "transpose" in name
        print(f"{name}, float64 input, float32 bias: returns {y.dtype} of shape {tuple(y.shape)}")
    except RuntimeError as exc:  # the expected error
        print(f"{name}, float64 input, float32 bias: raises {str(exc).strip().splitlines()[0][:100]}")
sys.exit(1 if accepted else 0)
