"""Quantized Conv1d/2d/3d under the onednn engine return an empty tensor where the kernel is longer than the input

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/88647 (ConvTranspose returns an empty tensor on CUDA where CPU raises, closed); https://github.com/pytorch/pytorch/pull/136739 (a missing stride check in the same quantized conv ops)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "quantized conv onednn empty output", "quantized conv kernel larger than input", "Trying to create tensor with negative dimension quantized conv"

What happens: under torch.backends.quantized.engine = "onednn", a quantized Conv1d/2d/3d whose dilated kernel is
longer than the padded input by one to two strides returns an empty tensor instead of raising: input 2, kernel 3,
stride 1 gives shape (1, 2, 0) (conv1d), (1, 2, 1, 0), (1, 2, 1, 1, 0); input 3, kernel 5, stride 2 the same. A longer
overhang (input 2, kernel 4, stride 1) raises "Trying to create tensor with negative dimension -1", an internal error
rather than a shape check. fbgemm and qnnpack raise "each dimension of output tensor should be greater than 0" for
all of these, and float F.conv1d raises "Kernel size can't be greater than actual input size". Measured on an AVX-512
VNNI Xeon, plain and with ONEDNN_MAX_CPU_ISA=AVX2, and in 2026-11 on an AVX2-only AMD EPYC.

Expected: the float modules' behaviour: an error where the output length floor((n + pads - d*(k-1) - 1) / s) + 1 is
below 1 (as fbgemm and qnnpack do).

Mechanism: PackedConvWeightsOnednn::apply_impl (aten/src/ATen/native/quantized/cpu/qconv.cpp) sizes the output with
at::native::conv_output_size (aten/src/ATen/native/ConvUtils.h), C division truncating toward zero, so
(2 - 3) / 1 + 1 = 0, and returns early when output.numel() == 0; unlike the fbgemm and qnnpack paths it has no
"each dimension of output tensor should be greater than 0" check. For an overhang shorter than the stride the same
truncation gives length 1 (a separate report).

Host: any CPU with the onednn quantized engine (x86-64).
"""
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
ENGINE = "onednn"


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
