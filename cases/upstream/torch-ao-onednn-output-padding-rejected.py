"""Quantized ConvTranspose under the onednn engine refuses any nonzero output_padding ("ONEDNN only supports zero output_padding")

Kind: valid-refused
Ask: Please support output_padding in the onednn transposed prepack, as fbgemm and qnnpack do, or name the limit in the onednn engine's documentation.

What happens: With torch.backends.quantized.engine = "onednn", constructing quantized ConvTranspose1d/2d/3d with a valid nonzero output_padding, such as the usual upsampler ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1), raises "quantized::conv_prepack: ONEDNN only supports zero output_padding." (the constructor prepacks the initial weight). fbgemm, qnnpack and the x86 engine (which sends these to fbgemm) run it exactly.

Expected: output_padding < max(stride, dilation) is valid (https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose2d.html).

Mechanism: PackedConvWeightsOnednn<kSpatialDim>::prepack (aten/src/ATen/native/quantized/cpu/qconv_prepack.cpp, torch 2.13.0) checks that output_padding is all zeros before building the oneDNN deconvolution, whose padding_r could carry it (not tried).
"""
import sys
import warnings

import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch.ao.nn.quantized is deprecated
print("torch", torch.__version__)
refused = False
for engine in ("onednn", "fbgemm", "x86"):
    torch.backends.quantized.engine = engine
    try:
        m = nnq.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        y = m(torch.quantize_per_tensor(torch.rand(1, 4, 5, 5), 0.01, 0, torch.quint8))
        print(f"{engine:6s}: runs, output {tuple(y.shape)}")
    except RuntimeError as e:
        print(f"{engine:6s}: raises {str(e).splitlines()[0]!r}")
        refused |= engine == "onednn"
sys.exit(1 if refused else 0)
