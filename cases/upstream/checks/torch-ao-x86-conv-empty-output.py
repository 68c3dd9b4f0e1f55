"""Quantized Conv1d/2d/3d under the x86 engine return an empty tensor on AVX512-VNNI CPUs where the kernel is longer than the input

Measures: the x86 engine on the shapes of the onednn check, with weight zero point 1 (fbgemm) and 0 (oneDNN on
AVX512-VNNI CPUs): the shape returned or the error raised. Exit 1 when an empty tensor is returned; 0 with 'not shown
on this host' on a CPU without AVX512-VNNI.
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
