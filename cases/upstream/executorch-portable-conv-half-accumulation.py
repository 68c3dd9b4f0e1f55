"""Portable convolution kernel sums float16 and bfloat16 convolutions in the half type (also bfloat16 convs under the XNNPACK partitioner)

Kind: wrong-value
Ask: Please accumulate op_convolution's half-type paths in float and round once, as #20090 did for softmax, mean and sum.

What happens: Lowered without a partitioner, a float16 1x1 Conv2d over 9 channels of 2048 and eight 1s (weights 1) returns 2048 where the sum, 2056, is exact in float16; bfloat16 256 and eight 1s returns 256 for 264. A float16 Conv2d(16, 4, 3, padding=1) on positive data (144 products) is 6.4 float16 ulps off float64, bfloat16 6.8, where eager torch stays within 0.5. The XNNPACK partitioner takes no bfloat16 conv, so there bfloat16 runs the same kernel.

Expected: Products summed in float32 and rounded once, as eager PyTorch's CPU convolution does.

Mechanism: kernels/portable/cpu/op_convolution.cpp (executorch 1.5.1), conv2d_impl: `CTYPE accum` (Half or BFloat16) takes each product with `accum += in_val * w_val`; the transposed path adds into the output in CTYPE too. 1-D convs run the same code over a unit axis.

Symptoms:
portable kernels (no partitioner): float16 and bfloat16 conv1d/conv2d and their transposes.
XnnpackPartitioner: bfloat16 convolutions stay on the portable kernel.
"""
import warnings
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch.version import __version__
warnings.simplefilter("ignore")  # export's deprecation warnings
print("executorch", __version__, "torch", torch.__version__)
wrong = False
cases = [(torch.float16, 2048.0, None), (torch.bfloat16, 256.0, None), (torch.bfloat16, 256.0, [XnnpackPartitioner()])]
for dtype, big, part in cases:
    conv = torch.nn.Conv2d(9, 1, 1, bias=False).to(dtype).eval()
    torch.nn.init.ones_(conv.weight)
    x = torch.tensor([big] + [1.0] * 8, dtype=dtype).reshape(1, 9, 1, 1)  # big + eight 1s: exact in the dtype
    edge = to_edge_transform_and_lower(torch.export.export(conv, (x,)), partitioner=part)
    program = Runtime.get().load_program(edge.to_executorch().buffer)
    y = program.load_method("forward").execute([x])[0].item()
    print(f"{dtype}, {'XNNPACK partitioner' if part else 'portable kernels'}: {big} + eight 1s = {y}, expected {big + 8}")
    wrong |= y != big + 8
raise SystemExit(1 if wrong else 0)
