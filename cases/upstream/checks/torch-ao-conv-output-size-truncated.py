"""Quantized Conv1d/2d/3d return a length-1 output where the kernel overhangs the input by less than a stride

Measures: fbgemm, x86 and onednn Conv1d/2d/3d, input 4, kernel 5, stride 2 (floor length 0, C-truncated length 1): the
shape each returns and its values against the sum of the in-range taps, beside float F.conv1d's error. Exit 1 when an
engine returns an output.
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
