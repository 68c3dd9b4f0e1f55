"""XNNPACK-delegated float16 convolutions accumulate in float16 on x86 CPUs with AVX512-FP16, in float32 elsewhere: undocumented

Kind: by-design-undocumented
Ask: Please document that a float16 model delegated to XNNPACK sums in float16 on CPUs with native float16 arithmetic, or let users ask for float32 accumulation.

What happens: A float16 Conv2d(16, 4, 3, padding=1) on positive data (144 products per output), lowered with XnnpackPartitioner and run on a Xeon with AVX512-FP16, is up to 5.2 float16 ulps off float64, where eager torch stays within 0.5. A 1x1 conv of 2048 and eight 1s (weights 1) returns 2048 instead of 2056, which float16 holds exactly. Without AVX512-FP16 (this AMD Zen 4 included) the same program returns 2056.

Expected: Eager PyTorch sums a float16 convolution in float32 and rounds once, on every CPU; so do XNNPACK's f16_f32acc kernels, chosen on the other x86 CPUs.

Mechanism: XNNPACK picks its float16 GEMM microkernels from CPUID (src/configs/gemm-config.c, init_f16_gemm_config): with AVX512-FP16, xnn_f16_gemm/igemm_minmax_ukernel_*__avx512fp16_broadcast, which multiply-add in float16; other AVX2 CPUs get the f16_f32acc kernels. ExecuTorch's delegate (executorch 1.5.1) maps a float16 conv to an XNNPACK f16 node and inherits the choice.
"""
import sys
import warnings
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch.version import __version__

warnings.simplefilter("ignore")  # export's deprecation warnings
print("executorch", __version__, "torch", torch.__version__)
conv = torch.nn.Conv2d(9, 1, 1, bias=False).half().eval()
torch.nn.init.ones_(conv.weight)
x = torch.tensor([2048.0] + [1.0] * 8, dtype=torch.float16).reshape(1, 9, 1, 1)  # 2048 + 8 ones = 2056, exact
edge = to_edge_transform_and_lower(torch.export.export(conv, (x,)), partitioner=[XnnpackPartitioner()])
program = Runtime.get().load_program(edge.to_executorch().buffer)
y = program.load_method("forward").execute([x])[0].item()
print(f"XNNPACK: 2048 + eight 1s = {y}, expected 2056 (eager torch: {conv(x).item()})")
if y != 2056:
    sys.exit(1)
print("not shown on this CPU: XNNPACK accumulates float16 in float32 here (no AVX512-FP16)")
