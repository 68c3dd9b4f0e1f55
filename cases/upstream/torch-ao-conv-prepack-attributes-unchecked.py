"""Quantized Conv/ConvTranspose (fbgemm, qnnpack) accept dilation 0 and negative padding: the prepack checks no attribute value

Kind: invalid-accepted
Ask: please check dilation > 0, padding >= 0 and stride > 0 in the fbgemm and qnnpack conv prepacks, with float nn.Conv2d's errors.

What happens: On CPU (torch 2.13.0, 2.14.1), torch.ao.nn.quantized.Conv2d(1, 4, 3, dilation=(1, 0)) on a 5x6 input returns (1, 4, 3, 6) under both engines, as if that axis's kernel had one tap; ConvTranspose2d with dilation=0 returns (1, 4, 5, 6); every rank alike. fbgemm also runs dilation -1 and padding -1 (Conv2d: (1, 4, 1, 2)); qnnpack fails on them with an INTERNAL ASSERT after a 9e11-byte allocation.

Expected: float nn.Conv2d's errors ("dilation should be greater than zero", "negative padding is not supported"); the quantized modules' docs defer to nn.Conv2d (https://pytorch.org/docs/stable/generated/torch.ao.nn.quantized.Conv2d.html).

Mechanism: PackedConvWeight<N>::prepack (fbgemm) and PackedConvWeightsQnnp<N>::prepack in aten/src/ATen/native/quantized/cpu/qconv_prepack.cpp check only the lengths of stride, padding and dilation; PR #136739 added a stride check to the oneDNN prepack only.

Symptoms:
- Stride 0: SIGFPE (fbgemm at construction, qnnpack at forward), open as #169255 (fix PR #169574 closed unmerged).
- onednn (x86 on VNNI CPUs too) checks the stride, not the dilation: Conv2d kernel (3, 1), dilation (1, 0) returns (1, 2, 3, 5).
"""
import sys
import warnings
import torch
warnings.simplefilter("ignore")  # quantized tensors' deprecation notice
print("torch", torch.__version__)
x = torch.quantize_per_tensor(torch.ones(1, 1, 5, 6), 1.0, 0, torch.quint8)
accepted, nnq = False, torch.ao.nn.quantized
for engine in ("fbgemm", "qnnpack"):
    torch.backends.quantized.engine = engine
    for cls, kw in ((nnq.Conv2d, {"dilation": (1, 0)}), (nnq.ConvTranspose2d, {"dilation": 0}), (nnq.Conv2d, {"padding": -1})):
        try:
            print(f"{engine} {cls.__name__}(1, 4, 3, {kw}): returns shape {tuple(cls(1, 4, 3, **kw)(x).shape)}")
            accepted = True
        except RuntimeError as exc:  # the expected error
            print(f"{engine} {cls.__name__}(1, 4, 3, {kw}): raises {str(exc).strip().splitlines()[0][:80]}")
try:
    torch.nn.Conv2d(1, 4, 3, dilation=(1, 0))(torch.ones(1, 1, 5, 6))
except RuntimeError as exc:
    print("float nn.Conv2d(1, 4, 3, dilation=(1, 0)): raises", str(exc).splitlines()[0])
sys.exit(1 if accepted else 0)
