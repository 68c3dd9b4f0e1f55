"""torch.ao Conv2d (quint8 x full range, qint8 w in [-127,127]) under onednn/x86 vs exact integers.
Run with ONEDNN_MAX_CPU_ISA=AVX2 (no VNNI): u8*s8 pair sums saturate in int16 (vpmaddubsw)."""
import os

import numpy as np
import torch
import torch.ao.nn.quantized as nnq
import torch.nn.functional as F

rng = np.random.default_rng(0)
cin, cout, k, L, zx = 16, 6, 3, 7, 128
x = rng.integers(0, 256, size=(1, cin, L, L)).astype(np.uint8)
w = rng.integers(-127, 128, size=(cout, cin, k, k)).astype(np.int8)
sx, sw = 0.01, 0.002
acc = F.conv2d(torch.from_numpy(x.astype(np.float64) - zx), torch.from_numpy(w.astype(np.float64))).numpy()
real = acc * sx * sw
sy = float(np.float32((real.max() - min(real.min(), 0)) / 255)); zy = int(np.clip(np.rint(-min(real.min(), 0) / sy), 0, 255))
ref = np.clip(np.rint(acc * sx * sw / sy) + zy, 0, 255)
print("ONEDNN_MAX_CPU_ISA =", os.environ.get("ONEDNN_MAX_CPU_ISA"), "torch", torch.__version__)
for eng in torch.backends.quantized.supported_engines:
    torch.backends.quantized.engine = eng
    m = nnq.Conv2d(cin, cout, k, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), sw, 0), None)
    m.scale, m.zero_point = sy, zy
    y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sx, zx)).int_repr().numpy().astype(np.int64)
    print(f"{eng:8s} max |y - exact| = {np.abs(y - ref).max():.0f} units")
