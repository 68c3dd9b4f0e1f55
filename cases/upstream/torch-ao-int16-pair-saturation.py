"""Quantized conv on CPUs without VNNI saturates u8 x s8 pair sums at int16, and the onednn/x86 defaults do not guard against it

Kind: by-design-undocumented
Ask: Please warn (or raise) where a full-range quantized conv will run a non-VNNI kernel, as this thread proposes, and document reduce_range for the onednn and x86 engines and PT2E.

What happens: Without VNNI, oneDNN and fbgemm add each pair of u8 x s8 products into a saturating int16 (vpmaddubsw): two channels of x = 255, w = 127 with y_scale 1000 give 33 for 65. Random full-range Conv2d 16 -> 6 3x3 is 47 units of y off; exact with VNNI or reduce_range=True, yet get_default_qconfig("onednn") and torchao's x86 inductor config use reduce_range=False.

Expected: oneDNN documents the saturation and its 7-bit remedy (https://oneapi-src.github.io/oneDNN/dev_guide_int8_computations.html).

Mechanism: oneDNN's jit_uni_int8_1x1:avx2 and brgconv_1x1:avx512_core kernels and fbgemm's AVX2 u8s8 kernels; torch's default qconfigs do not set reduce_range from the kernel that will run.

Symptoms:
onednn and x86 engines and PT2E's onednn::qconv_pointwise, Conv1d/2d/3d: oneDNN without VNNI (or ONEDNN_MAX_CPU_ISA=AVX2).
onednn and x86 engines, ConvTranspose1d/2d/3d: oneDNN's deconvolution without VNNI.
fbgemm, and x86 where it runs fbgemm: CPUs without AVX512-VNNI.
"""
import os
os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"  # oneDNN's kernels without VNNI, as on an AVX2-only CPU
import sys
import warnings

import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch.ao.nn.quantized is deprecated
print("torch", torch.__version__, "with ONEDNN_MAX_CPU_ISA=AVX2")
saturated = False
for engine in ("onednn", "x86"):
    torch.backends.quantized.engine = engine
    m = nnq.Conv2d(2, 1, 1, bias=False)  # two input channels: one u8 x s8 product pair per output
    m.set_weight_bias(torch.quantize_per_tensor(torch.full((1, 2, 1, 1), 127.0), 1.0, 0, torch.qint8), None)
    m.scale, m.zero_point = 1000.0, 0
    y = m(torch.quantize_per_tensor(torch.full((1, 2, 1, 1), 255.0), 1.0, 0, torch.quint8)).int_repr().item()
    print(f"{engine:6s}: (255*127 + 255*127) / 1000 = 64.77, expected 65, got {y}")
    saturated |= y != 65
sys.exit(1 if saturated else 0)
