"""Quantized ConvTranspose1d/2d/3d accept output_padding >= max(stride, dilation) and return uninitialized values

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/169236 (output_padding unchecked on MPS); https://github.com/pytorch/pytorch/pull/186524 (open: move the output_padding check into the shared transposed-conv shape check, float ops)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "quantized ConvTranspose output_padding", "output padding must be smaller than either stride or dilation quantized", "conv_transpose2d_prepack output_padding"

What happens: torch.ao.nn.quantized ConvTranspose{1,2,3}d never check output_padding < max(stride, dilation), which
float ConvTranspose enforces ("output padding must be smaller than either stride or dilation"). Under fbgemm, x86 (it
runs fbgemm whenever output_padding is nonzero) and qnnpack every invalid case tried returns an output. With kernel 1,
stride 1, no padding, fbgemm and x86 write the n computed values densely into the larger buffer and leave the rest
uninitialized: ConvTranspose1d 1 -> 1, bias 7, x = [6, 4, 6], output_padding 2 returns 5 values whose last two vary
from run to run ([13, 11, 13, 39, 106] and [13, 11, 13, 255, 107] in two runs, the natural extension in another:
[13, 11, 13, 7, 7]); ConvTranspose3d with output_padding (1, 0, 0) on a 1x1x1 input the same (extra plane 33, 114,
36, 75, 87 or 255 for bias 7). Elsewhere (kernel 3, stride 2, output_padding 2) the output is the natural extension
(extra rows = bias). qnnpack gives the natural extension in 1-D and 2-D, and 0 in the 3-D extra plane (its
ConvTranspose3d writes only output depth plane 0, a separate report). onednn refuses any output_padding (a separate
report). Measured on an AVX-512 VNNI Xeon and an AVX2-only AMD EPYC.

Expected: the float modules' behaviour: output_padding must be smaller than stride or dilation in every dimension,
else an error (PyTorch's ConvTranspose documentation and at::native's check). The script checks that an error is
raised and prints the values next to the natural extension (bias in the padded positions), computed with NumPy.

Mechanism: torch/ao/nn/quantized/modules/conv.py passes output_padding to quantized::conv_transpose{1,2,3}d_prepack,
and neither the prepack (aten/src/ATen/native/quantized/cpu/qconv_prepack.cpp) nor the op (qconv.cpp,
MakeDeConvOutputShape sizes the output with it) compares it with stride and dilation. fbgemm's kernel-1 stride-1
direct path fills only as many elements as the unpadded output has.

Host: any CPU with the fbgemm, x86 or qnnpack quantized engine.
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
