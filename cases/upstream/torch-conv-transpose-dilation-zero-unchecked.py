"""F.conv_transpose1d/2d accept dilation=0 when the kernel is 1 long, depending on batch size, groups and dtype

Kind: invalid-accepted
Ask: an error: refuse a dilation below 1 for the transposed convolutions on every path, as F.conv1d/2d/3d do.

What happens: `F.conv_transpose1d(x, w, stride=2, dilation=0)` with a 1-long kernel raises "dilation should be greater than zero" for a float32 batch of 1 but returns a (3, 2, 5) tensor for a batch of 3, and a (1, 2, 5) one for a batch of 1 with groups=2; bfloat16 and conv_transpose2d behave alike, float64 and float16 raise. A kernel of 2 or 3 is refused on every path ("could not create a primitive descriptor for the deconvolution"). torch.compile returns a result too. F.conv1d/2d/3d refuse dilation 0 on every path.

Expected: dilation is the spacing between kernel elements and must be positive; the same call should raise whatever the batch size, groups or dtype (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv_transpose1d.html).

Mechanism: ATen's shared check (check_shape_forward in aten/src/ATen/native/Convolution.cpp, ConvParams::is_dilation_neg) refuses only a negative dilation. A float32 batch of 1 without groups runs the slow kernel, whose slow_conv_transpose2d_shape_check refuses 0; larger batches, groups and bfloat16 run oneDNN's deconvolution, which takes 0 as oneDNN dilation -1 and, with a 1-long kernel, finds nothing to refuse.
"""
import sys

import torch
import torch.nn.functional as F

print("torch", torch.__version__)
accepted = False
for batch, groups in ((1, 1), (3, 1), (1, 2)):
    x = torch.ones(batch, 4, 3)
    w = torch.ones(4, 2 // groups, 1)  # 4 -> 2 channels, kernel length 1
    try:
        y = F.conv_transpose1d(x, w, stride=2, dilation=0, groups=groups)
        print(f"batch {batch}, groups {groups}: returned shape {tuple(y.shape)} (expected an error)")
        accepted = True
    except RuntimeError as e:
        print(f"batch {batch}, groups {groups}: RuntimeError: {str(e).splitlines()[0]}")
sys.exit(1 if accepted else 0)
