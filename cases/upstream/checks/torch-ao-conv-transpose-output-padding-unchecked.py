"""Quantized ConvTranspose1d/2d/3d accept output_padding >= max(stride, dilation)

Measures: ConvTranspose1d/2d/3d with output_padding >= max(stride, dilation) under fbgemm, x86, qnnpack and onednn
(kernel-1 and kernel-3 cases), against float's error and the natural extension (the extra positions hold the bias).
Exit 1 when an engine accepts the module.
"""
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
BIAS = 7


def run(engine: str, rank: int, n: int, k: int, s: int, o: int) -> np.ndarray | None:
    """ConvTranspose{rank}d 1 -> 1, weight 1, bias 7, x = 6, 4, 6, ... along the last dim; None if it raised."""
    torch.backends.quantized.engine = engine
    ones = (1,) * (rank - 1)
    m = (nnq.ConvTranspose1d, nnq.ConvTranspose2d, nnq.ConvTranspose3d)[rank - 1](
        1, 1, ones + (k,), stride=ones + (s,), output_padding=(0,) * (rank - 1) + (o,))
    w = torch._make_per_tensor_quantized_tensor(torch.ones((1, 1) + ones + (k,), dtype=torch.int8), 1.0, 0)
    m.set_weight_bias(w, torch.tensor([float(BIAS)]))
    m.scale, m.zero_point = 1.0, 0
    x = np.resize(np.array([6, 4], np.uint8), n).reshape((1, 1) + ones + (n,))
    return m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), 1.0, 0)).int_repr().numpy().ravel()


def natural(n: int, k: int, s: int, o: int) -> np.ndarray:
    """The transposed conv of x with w = 1 plus bias, extended by o positions holding the bias alone."""
    x = np.resize(np.array([6, 4]), n)
    y = np.zeros((n - 1) * s + k + o, np.int64)
    for i in range(n):
        y[i * s:i * s + k] += x[i]
    return y + BIAS


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}")
    cases = [(1, 3, 1, 1, 2), (3, 1, 1, 1, 1), (2, 3, 3, 2, 2)]  # (rank, n, k, s, o): o >= max(s, dilation 1)
    for rank, n, k, s, o in cases:
        try:
            torch.nn.functional.conv_transpose1d(torch.ones(1, 1, n), torch.ones(1, 1, k), stride=s, output_padding=o)
            print(f"float conv_transpose1d n={n} k={k} s={s} output_padding={o}: runs")
        except RuntimeError as exc:
            print(f"float conv_transpose1d n={n} k={k} s={s} output_padding={o}: raises {str(exc).splitlines()[0][:70]}")
            break
    accepted = 0
    for engine in ("fbgemm", "x86", "qnnpack", "onednn"):
        if engine not in torch.backends.quantized.supported_engines:
            continue
        for rank, n, k, s, o in cases:
            label = f"{engine:7s} ConvTranspose{rank}d input {n}, kernel {k}, stride {s}, output_padding {o}"
            try:
                y = run(engine, rank, n, k, s, o)
            except RuntimeError as exc:
                print(f"{label}: raises {str(exc).splitlines()[0][:80]}")
                continue
            accepted += engine != "onednn"
            print(f"{label}: returns {y.tolist()} (natural extension {natural(n, k, s, o).tolist()})")
    if accepted == 0 and not {"fbgemm", "x86", "qnnpack"} & set(torch.backends.quantized.supported_engines):
        print("not shown on this host: none of the fbgemm, x86, qnnpack engines is built in")
        return 0
    print(f"{accepted} invalid output_padding cases accepted")
    return 1 if accepted else 0


if __name__ == "__main__":
    sys.exit(main())
