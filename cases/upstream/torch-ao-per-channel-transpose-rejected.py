"""Quantized ConvTranspose refuses a per-channel weight under fbgemm, x86 and onednn, though qnnpack runs it exactly

Kind: valid-refused
Ask: Please support per-channel (axis 1) weights in the fbgemm and onednn transposed prepacks, as qnnpack does, or say in the BackendConfig and the docs that they take per-tensor weights only.

What happens: Adding to this thread: with a ConvTranspose2d weight quantized per output channel (axis 1), set_weight_bias raises "Per Channel Quantization is currently disabled for transposed conv" under fbgemm, x86 and onednn, while qnnpack runs the same module exactly (0 units of y off exact integer arithmetic, 4 -> 6 channels, 3x3). The default QConfigMappings give ConvTranspose a per-tensor weight, and a BackendConfig's DTypeConfig cannot say per-channel or per-tensor, so nothing warns beforehand.

Expected: A per-output-channel weight, the usual choice for accuracy, runs on every engine that runs the per-tensor one.

Mechanism: PackedConvWeight<kSpatialDim>::prepack and PackedConvWeightsOnednn<kSpatialDim>::prepack (aten/src/ATen/native/quantized/cpu/qconv_prepack.cpp, torch 2.13.0) raise for a per-channel weight when transpose is set, a check added for the groups > 1 ambiguity (#47535); PR #84025, which enabled groups == 1, was closed unmerged.
"""
import sys

import torch
import torch.ao.nn.quantized as nnq

print("torch", torch.__version__)
w = torch.quantize_per_channel(torch.randn(4, 6, 3, 3), torch.linspace(0.01, 0.03, 6), torch.zeros(6, dtype=torch.long), 1, torch.qint8)
x = torch.quantize_per_tensor(torch.rand(1, 4, 5, 5), 0.01, 0, torch.quint8)
refused = False
for engine in ("fbgemm", "x86", "onednn", "qnnpack"):
    torch.backends.quantized.engine = engine
    m = nnq.ConvTranspose2d(4, 6, 3, bias=False)
    try:
        m.set_weight_bias(w, None)  # per-channel scales on axis 1, the output channels
        print(f"{engine:7s}: runs, output {tuple(m(x).shape)}")
    except RuntimeError as e:
        print(f"{engine:7s}: raises {str(e).splitlines()[0]!r}")
        refused |= engine != "qnnpack"
sys.exit(1 if refused else 0)
