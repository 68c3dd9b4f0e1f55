"""ExecuTorch's XNNPACK delegate flushes subnormal inputs and results of a convolution to zero; the portable kernels keep them

Measures: a float32 Conv2d exported with torch.export, lowered with XnnpackPartitioner and without a partitioner
(portable kernels), run by the ExecuTorch runtime on a subnormal input with normal products (x = 2^-128, w = 16)
and on normal inputs whose products and result are subnormal (x = w = 2^-65), against the exact values. Exit 1
where the delegate gives zero (XNNPACK runs every operator with PTHREADPOOL_FLAG_DISABLE_DENORMALS).
"""
import sys
import warnings

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

warnings.simplefilter("ignore")
print("torch", torch.__version__)
flushed = False
for what, ex, ew in (("subnormal input, normal result", -128, 4), ("normal inputs, subnormal result", -65, -65)):
    conv = torch.nn.Conv2d(4, 1, 3, bias=False).eval()
    torch.nn.init.constant_(conv.weight, 2.0 ** ew)
    x = torch.full((1, 4, 5, 5), 2.0 ** ex)
    want, got = 36 * 2.0 ** ex * 2.0 ** ew, {}
    for name, part in (("XNNPACK", [XnnpackPartitioner()]), ("portable", None)):
        edge = to_edge_transform_and_lower(torch.export.export(conv, (x,)), partitioner=part)
        program = Runtime.get().load_program(edge.to_executorch().buffer)
        got[name] = program.load_method("forward").execute([x])[0][0, 0, 0, 0].item()
    print(f"float32 {what}: XNNPACK {got['XNNPACK']!r}, portable kernels {got['portable']!r}, exact {want!r}")
    flushed |= got["XNNPACK"] == 0.0
sys.exit(1 if flushed else 0)
