"""Quantized Conv1d/2d/3d under the x86 engine return an empty tensor on AVX512-VNNI CPUs where the kernel is longer than the input

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/88647 (ConvTranspose returns an empty tensor on CUDA where CPU raises, closed); https://github.com/pytorch/pytorch/pull/136739 (a missing stride check in the same quantized conv ops)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "quantized conv x86 engine empty output", "quantized conv kernel larger than input", "should_use_onednn_quant"

What happens: torch's default x86 quantized engine runs a conv with symmetric (zero point 0) weights in oneDNN on CPUs
with AVX512-VNNI, and in fbgemm otherwise. Through oneDNN a quantized Conv1d/2d/3d whose kernel is longer than the
input by one to two strides returns an empty tensor: input 2, kernel 3, stride 1 gives (1, 2, 0), (1, 2, 1, 0),
(1, 2, 1, 1, 0); input 3, kernel 5, stride 2 the same; input 2, kernel 4 raises "Trying to create tensor with negative
dimension -1". The same module with weight zero point 1 (routed to fbgemm) raises "[QConv2D] each dimension of output
tensor should be greater than 0". So the same model raises or returns an empty tensor depending on the CPU it runs on.
Measured on an AVX-512 VNNI Xeon (also with ONEDNN_MAX_CPU_ISA=AVX2, which caps oneDNN's kernels but not the routing)
and on a Sapphire Rapids host (2026-11-27); on an AVX2-only AMD EPYC the x86 engine runs fbgemm and raises.

Expected: the float modules' behaviour: an error where the output length floor((n + pads - d*(k-1) - 1) / s) + 1 is
below 1, whichever kernel library the x86 engine picks.

Mechanism: should_use_onednn_quant (aten/src/ATen/native/quantized/cpu/OnednnUtils.h, called by the x86 prepack in
qconv_prepack.cpp) sends the conv to oneDNN when cpuinfo reports AVX512-VNNI, the weight is symmetric, groups <= 100
and output_padding is zero; PackedConvWeightsOnednn::apply_impl (qconv.cpp) then sizes the output with
at::native::conv_output_size (C division truncating toward zero) and returns early for an empty output, without the
positivity check the fbgemm path has.

Host: x86 engine on CPUs with AVX512-VNNI (cpuinfo), symmetric weights: where it runs oneDNN.
"""
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
ENGINE = "x86"


def run(rank: int, n: int, k: int, s: int, w_zero_point: int = 0) -> tuple | None:
    """The engine's output shape for a 1 -> 2 channel conv of an n-long input; None if it raised."""
    torch.backends.quantized.engine = ENGINE
    module = (nnq.Conv1d, nnq.Conv2d, nnq.Conv3d)[rank - 1]
    ones = (1,) * (rank - 1)
    m = module(1, 2, ones + (k,), stride=ones + (s,), bias=False)
    w = torch._make_per_tensor_quantized_tensor(torch.ones((2, 1) + ones + (k,), dtype=torch.int8), 1.0, w_zero_point)
    m.set_weight_bias(w, None)
    m.scale, m.zero_point = 1.0, 0
    x = np.arange(1, n + 1, dtype=np.uint8).reshape((1, 1) + ones + (n,))
    label = f"conv{rank}d input {n}, kernel {k}, stride {s}, weight zero point {w_zero_point}"
    try:
        y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), 1.0, 0))
    except RuntimeError as exc:
        print(f"  {label}: raises {str(exc).splitlines()[0][:90]}")
        return None
    print(f"  {label}: returns shape {tuple(y.shape)}, {y.numel()} elements")
    return tuple(y.shape)


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}, "
          f"CPU AVX512-VNNI: {torch.cpu._is_vnni_supported()}")
    if ENGINE not in torch.backends.quantized.supported_engines:
        print(f"not shown on this host: the {ENGINE} quantized engine is not built in")
        return 0
    if not torch.cpu._is_vnni_supported():
        print("not shown on this host: without AVX512-VNNI the x86 engine runs fbgemm, which raises")
        return 0
    print("weight zero point 1 (asymmetric: the x86 engine runs fbgemm):")
    run(1, 2, 3, 1, w_zero_point=1)
    print("weight zero point 0 (symmetric: the x86 engine runs oneDNN on this CPU):")
    empty = 0
    for rank in (1, 2, 3):
        for n, k, s in ((2, 3, 1), (3, 5, 2), (2, 4, 1)):  # floor lengths 0, 0, -1; C truncation 0, 0, -1
            try:
                shape = run(rank, n, k, s)
            except Exception as exc:  # noqa: BLE001 - an engine that cannot build the module here
                print(f"  conv{rank}d: could not run ({type(exc).__name__}: {str(exc).splitlines()[0][:80]})")
                continue
            empty += shape is not None and 0 in shape
    print(f"{empty} of 6 zero-length cases returned an empty tensor instead of raising")
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main())
