"""fbgemm quantized convs without AVX512-VNNI saturate u8 x s8 pair sums at int16 for full-range activations

Measures: fbgemm Conv1d 1 -> 1, kernel 2, x = 255, w = 127 (65 exact, 33 saturated) and random full-range modules
against exact integer results. Exit 1 when a pair saturates, which fbgemm does only on a CPU without AVX512-VNNI (it
reads CPUID, not ONEDNN_MAX_CPU_ISA).
"""
import sys
import warnings

import numpy as np
import torch
import torch.ao.nn.quantized as nnq
import torch.nn.functional as F

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules


def main() -> int:
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}, CPU "
          f"capability {torch.backends.cpu.get_cpu_capability()}, AVX512-VNNI (CPUID): {torch.cpu._is_vnni_supported()}")
    if "fbgemm" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: the fbgemm quantized engine is not built in")
        return 0
    torch.backends.quantized.engine = "fbgemm"
    wrong = 0
    # 1. The smallest: one input channel, two taps, x = 255, w = 127: exact acc 64770 -> 65, int16-saturated -> 33.
    m = nnq.Conv1d(1, 1, 2, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.full((1, 1, 2), 127, dtype=torch.int8), 1.0, 0), None)
    m.scale, m.zero_point = 1000.0, 0
    y = int(m(torch._make_per_tensor_quantized_tensor(torch.full((1, 1, 2), 255, dtype=torch.uint8), 1.0, 0)).int_repr())
    print(f"fbgemm Conv1d 1 -> 1, kernel 2, x = 255, w = 127, y_scale 1000: y = {y}, exact 65 (int16-saturated: 33)")
    wrong += abs(y - 65) > 1
    # 2. Random full-range x (zero point 128) and w, 16 -> 6 channels, 3x3, conv2d and conv_transpose2d.
    rng = np.random.default_rng(0)
    cin, cout, k, size, zx, sx, sw = 16, 6, 3, 7, 128, 0.01, 0.002
    x = rng.integers(0, 256, size=(1, cin, size, size)).astype(np.uint8)
    for name, transposed in (("Conv2d", False), ("ConvTranspose2d", True)):
        w = rng.integers(-127, 128, size=(cin, cout, k, k) if transposed else (cout, cin, k, k)).astype(np.int8)
        fn = F.conv_transpose2d if transposed else F.conv2d  # float64: every partial sum is an exact integer here
        acc = fn(torch.from_numpy(x.astype(np.float64) - zx), torch.from_numpy(w.astype(np.float64))).numpy()
        lo, hi = min(acc.min(), 0) * sx * sw, max(acc.max(), 0) * sx * sw
        sy = float(np.float32((hi - lo) / 255))
        zy = int(np.clip(np.rint(-lo / sy), 0, 255))
        exact = np.clip(np.rint(acc * sx * sw / sy) + zy, 0, 255)
        m = (nnq.ConvTranspose2d if transposed else nnq.Conv2d)(cin, cout, k, bias=False)
        m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), sw, 0), None)
        m.scale, m.zero_point = sy, zy
        y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sx, zx)).int_repr().numpy().astype(np.int64)
        off = np.abs(y - exact)
        print(f"fbgemm {name} {cin} -> {cout}, 3x3, random full-range u8 / s8: max |y - exact| = {off.max():.0f} units "
              f"of y on {int((off > 1).sum())}/{off.size} elements")
        wrong += off.max() > 1
    if not wrong and torch.cpu._is_vnni_supported():
        print("not shown on this host: fbgemm uses its AVX512-VNNI kernels here (int32 sums)")
        return 0
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
