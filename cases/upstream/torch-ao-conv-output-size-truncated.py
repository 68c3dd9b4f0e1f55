"""Quantized Conv1d/2d/3d return a length-1 output where the kernel overhangs the input by less than a stride

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/google/XNNPACK/pull/10453 (the same phantom length-1 output from truncating output-size arithmetic); https://github.com/pytorch/pytorch/pull/136739 (a missing stride check in the same quantized conv ops)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "quantized conv kernel larger than input", "quantized conv output size truncation", "each dimension of output tensor should be greater than 0"

What happens: torch.ao.nn.quantized Conv1d/2d/3d compute the output length as (n + pads - d*(k-1) - 1) / s + 1
with C integer division, which truncates toward zero. Where the dilated kernel overhangs the padded input by less
than the stride (-s < n + pads - d*(k-1) - 1 < 0) the length comes out 1 instead of 0, and the fbgemm, x86 and onednn
engines return a tensor of length 1 instead of raising. Input length 4, kernel 5, stride 2, no padding: shape
(2, 1, 1) (conv1d), (2, 1, 1, 1) (conv2d), (2, 1, 1, 1, 1) (conv3d), where float F.conv1d raises "Kernel size can't
be greater than actual input size". The value is the sum over the in-range taps, as if the input were zero-padded at
the end: x = [1, 2, 4, 8] and [16, 32, 64, 128] with w = 1 give 15 and 240. Measured on an AVX-512 VNNI Xeon (x86
runs this in oneDNN there) and, in 2026-11, on an AVX2-only AMD EPYC (x86 runs fbgemm). For a longer overhang fbgemm
raises "[QConv2D] each dimension of output tensor should be greater than 0"; onednn (and x86 where it uses oneDNN)
returns an empty tensor one step further (reported separately), and qnnpack dies with SIGSEGV on these shapes
(reported separately).

Expected: the output length of a convolution is floor((n + pads - d*(k-1) - 1) / s) + 1, as float Conv1d/2d/3d
compute it; where it is below 1 the quantized modules should raise as the float ones do (and as fbgemm already does
for a longer overhang).

Mechanism: the output size is computed with C division that truncates toward zero: fbgemm's conv_param_t OUT_DIM
(read by MakeConvOutputShape in aten/src/ATen/native/quantized/cpu/qconv.cpp, PackedConvWeight::apply_impl, whose
"each dimension of output tensor should be greater than 0" check then passes for 1) and ATen's conv_output_size
(aten/src/ATen/native/ConvUtils.h, used by PackedConvWeightsOnednn::apply_impl). The kernel then runs with the
truncated shape.

Host: any CPU with the fbgemm, x86 or onednn quantized engine (x86-64).
"""
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq
import torch.nn.functional as F

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
N, K, S = 4, 5, 2  # input length, kernel, stride: (4 - 5) / 2 + 1 truncates to 1, floor gives 0


def run(engine: str, rank: int) -> str | None:
    """The engine's output for the overhanging conv, as text; None if it raised."""
    torch.backends.quantized.engine = engine
    module = (nnq.Conv1d, nnq.Conv2d, nnq.Conv3d)[rank - 1]
    ones = (1,) * (rank - 1)
    m = module(1, 1, ones + (K,), stride=ones + (S,), bias=False)
    w = torch._make_per_tensor_quantized_tensor(torch.ones((1, 1) + ones + (K,), dtype=torch.int8), 1.0, 0)
    m.set_weight_bias(w, None)
    m.scale, m.zero_point = 1.0, 0
    x = np.array([[1, 2, 4, 8], [16, 32, 64, 128]], dtype=np.uint8).reshape((2, 1) + ones + (N,))
    try:
        y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), 1.0, 0))
    except RuntimeError as exc:
        print(f"  {engine:7s} conv{rank}d: raises {str(exc).splitlines()[0][:90]}")
        return None
    values = y.int_repr().flatten().tolist()
    print(f"  {engine:7s} conv{rank}d: returns shape {tuple(y.shape)}, y = {values} (sum of the in-range taps: "
          f"{x.reshape(2, -1).astype(int).sum(axis=1).tolist()})")
    return str(values)


def main() -> int:
    engines = [e for e in ("fbgemm", "x86", "onednn") if e in torch.backends.quantized.supported_engines]
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}, "
          f"CPU AVX512-VNNI (x86 then runs oneDNN): {torch.cpu._is_vnni_supported()}")
    if not engines:
        print("not shown on this host: none of the fbgemm, x86, onednn engines is built in")
        return 0
    floor_len = (N - K) // S + 1
    print(f"input {N}, kernel {K}, stride {S}: output length floor {floor_len}, C truncation {int((N - K) / S) + 1}")
    try:
        F.conv1d(torch.ones(1, 1, N), torch.ones(1, 1, K), stride=S)
        print("  float F.conv1d runs")
    except RuntimeError as exc:
        print(f"  float F.conv1d raises {str(exc).splitlines()[0][:90]}")
    accepted = 0
    for engine in engines:
        for rank in (1, 2, 3):
            try:
                accepted += run(engine, rank) is not None
            except Exception as exc:  # noqa: BLE001 - an engine that cannot build the module here
                print(f"  {engine:7s} conv{rank}d: could not run ({type(exc).__name__}: {str(exc).splitlines()[0][:80]})")
    print(f"{accepted} of {3 * len(engines)} returned an output where the length is {floor_len}")
    return 1 if accepted else 0


if __name__ == "__main__":
    sys.exit(main())
