"""F.conv1d/2d/3d with padding='same' or 'valid' accept a bias of another dtype (a complex bias loses its imaginary part)

Kind: invalid-accepted
Ask: please make the string-padding forms raise "Input type (...) and bias type (...) should be the same" as the integer-padding forms do, instead of casting the bias.

What happens: on CPU with torch 2.13.0, F.conv1d with a float64 input and weight and a complex128 bias returns a float64 result when padding='same' or 'valid', dropping the bias's imaginary part with only a UserWarning; with padding=0 or 1 the same tensors raise "Input type (double) and bias type (c10::complex<double>) should be the same". Measured for conv1d/2d/3d, groups 1 and 2: float16 and float64 inputs accept any other bias dtype; float32 and bfloat16 ones raise where oneDNN runs them.

Expected: the same error for every padding form; the functional docs (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv1d.html) do not say padding changes which arguments are checked.

Mechanism: conv1d_symint, conv2d_symint and conv3d_symint in aten/src/ATen/native/Convolution.cpp check the bias dtype before at::convolution; the string-padding overloads (conv1d_padding_symint and its 2-D/3-D siblings) go through _convolution_mode, which calls at::convolution without that check, and the slow CPU kernels then add the bias in the input's dtype.

Symptoms:
float16 or float64 input, another bias dtype: an output.
bfloat16 input, another bias dtype, a CPU without oneDNN's bfloat16 kernels (AVX2): an output.
"""
import sys
import warnings
import torch
import torch.nn.functional as F
warnings.simplefilter("ignore")  # the complex-to-real cast warns
print("torch", torch.__version__)
x, w = torch.arange(1.0, 8.0, dtype=torch.float64).reshape(1, 1, 7), torch.ones(2, 1, 3, dtype=torch.float64)
b = torch.tensor([1 + 5j, 2 - 5j], dtype=torch.complex128)  # a complex bias for a float64 conv
accepted = False
for padding in (1, "same", 0, "valid"):
    try:
        y = F.conv1d(x, w, b, padding=padding)
        accepted = True
        print(f"padding={padding!r}: returns {y.dtype} {tuple(y.shape)}, y[0, :, 0] = {y[0, :, 0].tolist()}")
    except RuntimeError as exc:  # the expected error
        print(f"padding={padding!r}: raises {str(exc).strip().splitlines()[0][:100]}")
sys.exit(1 if accepted else 0)
