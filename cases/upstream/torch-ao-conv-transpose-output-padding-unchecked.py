"""Quantized ConvTranspose accepts output_padding >= max(stride, dilation); with a 1x1 kernel, fbgemm and x86 leave the padded tail uninitialized

Kind: invalid-accepted
Ask: Please raise "output padding must be smaller than either stride or dilation" in the quantized ConvTranspose prepack or op, as the float op does.

What happens: fbgemm, x86 and qnnpack accept any output_padding. Kernel 1, stride 1, output_padding 2, x = [3, 2, 3], w = 2, bias 7: fbgemm and x86 return [13, 11, 13, 255, 53] in one call, [13, 11, 13, 7, 7] in the next; the tail is never written. Other geometries, and qnnpack in 1-D and 2-D, give the bias there. Float F.conv_transpose1d raises.

Expected: output_padding must be smaller than stride or dilation (https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose1d.html).

Mechanism: Neither the quantized conv_transpose prepacks (qconv_prepack.cpp) nor PackedConvWeight<kSpatialDim>::apply_impl (qconv.cpp, torch 2.13.0) check output_padding; the output is allocated uninitialized at the padded size, and fbgemm's 1x1 transposed path writes only the positions the input maps to.
"""
import sys

import torch
import torch.ao.nn.quantized as nnq

print("torch", torch.__version__)
x = torch.quantize_per_tensor(torch.tensor([[[3.0, 2.0, 3.0]]]), 1.0, 0, torch.quint8)
accepted = False  # kernel 1, stride 1, dilation 1: float conv_transpose1d refuses output_padding 2
for engine in ("fbgemm", "x86", "qnnpack"):
    torch.backends.quantized.engine = engine
    try:
        m = nnq.ConvTranspose1d(1, 1, 1, output_padding=2)
        m.set_weight_bias(torch.quantize_per_tensor(torch.full((1, 1, 1), 2.0), 1.0, 0, torch.qint8), torch.tensor([7.0]))
        ys = [m(x).int_repr().flatten().tolist() for _ in range(3)]
        print(f"{engine:7s} accepts output_padding 2; three calls: {ys}; bias in the tail: [13, 11, 13, 7, 7]")
        accepted = True
    except RuntimeError as e:
        print(f"{engine:7s} raises {str(e)[:70]!r}")
sys.exit(1 if accepted else 0)
