"""Per-channel quantized ConvTranspose is refused by the fbgemm, x86 and onednn prepacks, while qnnpack runs it exactly

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: comment for https://github.com/pytorch/pytorch/issues/54816
Related: https://github.com/pytorch/pytorch/issues/47535 (per-channel observer for grouped convolution weights); https://github.com/pytorch/pytorch/pull/79233 (per-channel observers for ungrouped ConvTranspose, closed); https://github.com/pytorch/pytorch/pull/84025 (per-channel quant in convTranspose, closed)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "Per Channel Quantization is currently disabled for transposed conv", "per channel ConvTranspose quantization", "per channel weight observer ConvTranspose"

What happens: the state of per-channel ConvTranspose in torch 2.13, below the observer. Eager prepare still refuses a
per-channel weight observer for ConvTranspose ("Per channel weight observer is not supported yet for ConvTranspose{n}d",
this issue), and torch.ao's default QConfigMappings give ConvTranspose a per-tensor weight. Building the quantized
module directly, an ungrouped ConvTranspose2d 4 -> 6 with int8 weights quantized per output channel (axis 1 of the
(C_in, C_out, kH, kW) weight): the fbgemm, x86 and onednn engines raise "Per Channel Quantization is currently disabled
for transposed conv" in set_weight_bias (the prepack); qnnpack runs it and matches the exact integer result (0 units of
y off). Also under qnnpack, scales given along axis 0 (C_in = 4 scales for 6 output channels) are not rejected as the
wrong length: the op fails later with "requantization scale must be finite and positive", apparently reading past the
4 scales.

Expected: per-channel weights on the output-channel axis of a transposed conv are the same per-output-channel scaling
as for a forward conv; oneDNN's deconvolution takes per-output-channel weight scales, and qnnpack already runs the
case exactly. The reference is exact integer arithmetic: acc = conv_transpose(x - x_zp, w_int), y = clip(round(acc *
x_scale * w_scale[c] / y_scale) + y_zp, 0, 255).

Mechanism: the per-channel check in the fbgemm and onednn transposed-conv prepacks
(aten/src/ATen/native/quantized/cpu/qconv_prepack.cpp, PackedConvWeight<k>::prepack and
PackedConvWeightsOnednn<k>::prepack: TORCH_CHECK(!transpose || per-tensor, "Per Channel Quantization is currently
disabled for transposed conv")); the x86 engine reaches the same checks.

Host: any CPU with the fbgemm, x86 or onednn quantized engine (x86-64).
"""
import itertools
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
CIN, COUT, K, L = 4, 6, 3, 5
SX, ZX, SY, ZY = 0.01, 128, 0.05, 128


def transposed_int(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact integer conv_transpose2d (stride 1, no padding) of x (N, C_in, H, W) with w (C_in, C_out, kH, kW)."""
    n, _, h, wd = x.shape
    y = np.zeros((n, w.shape[1], h + w.shape[2] - 1, wd + w.shape[3] - 1), np.int64)
    for i, j in itertools.product(range(w.shape[2]), range(w.shape[3])):
        y[:, :, i:i + h, j:j + wd] += np.einsum("nchw,co->nohw", x, w[:, :, i, j])
    return y


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}")
    rng = np.random.default_rng(0)
    w = rng.integers(-20, 21, (CIN, COUT, K, K)).astype(np.int8)
    x = rng.integers(0, 256, (1, CIN, L, L)).astype(np.uint8)
    scales = np.linspace(0.001, 0.003, COUT)
    acc = transposed_int(x.astype(np.int64) - ZX, w.astype(np.int64))
    exact = np.clip(np.rint(acc * SX * scales.reshape(1, -1, 1, 1) / SY) + ZY, 0, 255)
    refused = []
    for engine in ("fbgemm", "x86", "onednn", "qnnpack"):
        if engine not in torch.backends.quantized.supported_engines:
            continue
        torch.backends.quantized.engine = engine
        wq = torch._make_per_channel_quantized_tensor(torch.from_numpy(w), torch.from_numpy(scales),
                                                      torch.zeros(COUT, dtype=torch.int64), 1)
        m = nnq.ConvTranspose2d(CIN, COUT, K, bias=False)
        try:
            m.set_weight_bias(wq, None)
            m.scale, m.zero_point = SY, ZY
            y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), SX, ZX)).int_repr().numpy()
        except RuntimeError as exc:
            print(f"{engine:8s} ConvTranspose2d {CIN}->{COUT}, per-channel weight (axis 1): raises "
                  f"{str(exc).splitlines()[0][:90]}")
            if engine != "qnnpack":
                refused.append(engine)
            continue
        off = np.abs(y.astype(np.int64) - exact)
        print(f"{engine:8s} ConvTranspose2d {CIN}->{COUT}, per-channel weight (axis 1): output {y.shape}, "
              f"max |y - exact| = {off.max():.0f} units of y")
    if not refused and "fbgemm" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: none of the fbgemm, x86, onednn engines is built in")
        return 0
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
