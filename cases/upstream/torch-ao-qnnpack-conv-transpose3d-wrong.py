"""Quantized ConvTranspose3d under qnnpack writes only output depth plane 0; the other planes are uninitialized memory

Kind: wrong-value
Ask: Please pass the depth to qnnpackDeConv in the 3-D branch (as the forward conv does), or refuse 3-D transposed convs under qnnpack.

What happens: Under the qnnpack engine, quantized ConvTranspose3d returns depth plane 0 right and the other planes as whatever the output buffer held: a 1x1x1 identity kernel over an input of depth 3 holding 10..120 returns zeros in one run and bytes of ASCII text in another for planes 1 and 2; random data is 222-255 units of y off. Output depth 1 at batch 1 without output_padding, qnnpack's ConvTranspose1d/2d and Conv3d, and fbgemm are right.

Expected: Every output plane computed (https://pytorch.org/docs/stable/generated/torch.ao.nn.quantized.ConvTranspose3d.html).

Mechanism: PackedConvWeightsQnnp<3>::apply_impl (aten/src/ATen/native/quantized/cpu/qconv.cpp, torch 2.13.0) allocates the output uninitialized and, transposed, calls qnnpack::qnnpackDeConv(..., N, H, W, ...) without the depth, where the forward branch passes N, D, H, W. PR #66350, which brought 3-D convolution to qnnpack, left the transposed case for later.

Symptoms:
Output depth above 1: planes 1.. wrong; at batch N only the first N of the N x depth planes are written.
output_padding > 0, depth 1 too: wrong, and it writes past the output (the next allocation aborts: "double free or corruption").
Where every output is the bias alone, the stale planes can hold the right value.
"""
import sys
import warnings

import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch.ao.nn.quantized is deprecated
print("torch", torch.__version__)
x = torch.quantize_per_tensor(torch.arange(10.0, 130.0, 10.0).reshape(1, 1, 3, 2, 2), 1.0, 0, torch.quint8)
wrong = False
for engine in ("qnnpack", "fbgemm"):
    torch.backends.quantized.engine = engine
    m = nnq.ConvTranspose3d(1, 1, 1, bias=False)  # identity: output = input, depth 3
    m.set_weight_bias(torch.quantize_per_tensor(torch.ones(1, 1, 1, 1, 1), 1.0, 0, torch.qint8), None)
    m.scale, m.zero_point = 1.0, 0
    y = m(x).int_repr()
    print(f"{engine:7s} planes 0, 1, 2: {[y[0, 0, d].flatten().tolist() for d in range(3)]}")
    wrong |= not torch.equal(y, x.int_repr())
print("expected        :", [x.int_repr()[0, 0, d].flatten().tolist() for d in range(3)])
sys.exit(1 if wrong else 0)
