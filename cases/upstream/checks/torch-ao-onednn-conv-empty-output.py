"""Quantized Conv1d/2d/3d under the onednn engine return an empty tensor where the kernel is longer than the input

Measures: onednn Conv1d/2d/3d where the truncated output length is 0 (input 2, kernel 3, stride 1; input 3, kernel 5,
stride 2) or negative (input 2, kernel 4): the shape returned or the error raised. Exit 1 when an empty tensor is
returned.
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
