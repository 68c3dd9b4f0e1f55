"""Quantized ConvTranspose3d under qnnpack writes only output depth plane 0; the other planes are uninitialized memory

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: none
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "qnnpack ConvTranspose3d wrong", "quantized conv_transpose3d qnnpack", "qnnpackDeConv depth"

What happens: torch.ao.nn.quantized.ConvTranspose3d under torch.backends.quantized.engine = "qnnpack" computes only
the first output depth plane. With a 1x1x1 identity kernel (w = 1, all scales 1, zero points 0) over an input of depth
3 holding 10, 20, ..., 120, the output's plane 0 is [10, 20, 30, 40] as expected and planes 1 and 2 are [0, 0, 0, 0]
in one run, other values (e.g. [101, 96, 32, 116]) in another, for [50, 60, 70, 80] and [90, 100, 110, 120]. Depth 1
is exact, and so are ConvTranspose1d/2d and the forward Conv3d under qnnpack. With random data convdiff measured
222-255 units of y off (the errors are the unwritten planes, not saturation).

Expected: ConvTranspose3d over all three spatial dims, as fbgemm and the float module compute it; here every output
element equals its input element (identity kernel). The reference is the input itself (exact integers).

Mechanism: PackedConvWeightsQnnp<3>::apply_impl (aten/src/ATen/native/quantized/cpu/qconv.cpp) allocates the 3-D output
with empty_affine_quantized (uninitialized), then for a transposed conv calls qnnpack::qnnpackDeConv(op, weights, N, H,
W, ...) without the depth D, while the forward branch calls qnnpack::qnnpackConv(op, weights, N, D, H, W, ...): the
deconvolution runs as a 2-D one over the first plane and leaves the rest unwritten.

Host: any CPU with the qnnpack quantized engine.
"""
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules


def identity(module, engine: str, x: np.ndarray) -> np.ndarray:
    """A 1 -> 1 channel kernel-1 quantized (transposed) conv with w = 1, all scales 1: y must equal x."""
    torch.backends.quantized.engine = engine
    r = x.ndim - 2
    m = module(1, 1, 1, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.ones((1, 1) + (1,) * r, dtype=torch.int8), 1.0, 0),
                      None)
    m.scale, m.zero_point = 1.0, 0
    return m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), 1.0, 0)).int_repr().numpy()


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}")
    if "qnnpack" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: the qnnpack quantized engine is not built in")
        return 0
    wrong = 0
    for depth in (1, 3):
        x = (np.arange(depth * 4).reshape(1, 1, depth, 2, 2) * 10 + 10).astype(np.uint8)
        for run in (1, 2):
            y = identity(nnq.ConvTranspose3d, "qnnpack", x)
            planes = [y[0, 0, d].ravel().tolist() for d in range(depth)]
            print(f"qnnpack ConvTranspose3d, identity kernel, input depth {depth}, run {run}: planes {planes}, "
                  f"expected {[x[0, 0, d].ravel().tolist() for d in range(depth)]}")
            bad = [d for d in range(depth) if not np.array_equal(y[0, 0, d], x[0, 0, d])]
            if bad:
                print(f"  planes {bad} differ")
            wrong += bool(bad)
    x2 = (np.arange(4).reshape(1, 1, 2, 2) * 10 + 10).astype(np.uint8)
    y2 = identity(nnq.ConvTranspose2d, "qnnpack", x2)
    print(f"qnnpack ConvTranspose2d, identity kernel: {y2.ravel().tolist()}, expected {x2.ravel().tolist()}")
    x3 = (np.arange(12).reshape(1, 1, 3, 2, 2) * 10 + 10).astype(np.uint8)
    y3 = identity(nnq.Conv3d, "qnnpack", x3)
    print(f"qnnpack Conv3d, identity kernel, depth 3: equal to the input: {np.array_equal(y3, x3)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
