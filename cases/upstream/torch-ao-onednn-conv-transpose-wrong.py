"""torch.ao ConvTranspose2d (quint8 x, qint8 per-tensor w) under each quantized engine vs the exact integer result.

Usage: python ao_repro_1.py [x_zp] [bias 0/1] [range full/narrow]
"""
import sys

import numpy as np
import torch
import torch.ao.nn.quantized as nnq
import torch.nn.functional as F

zx = int(sys.argv[1]) if len(sys.argv) > 1 else 128
use_bias = (sys.argv[2] != "0") if len(sys.argv) > 2 else True
rng_kind = sys.argv[3] if len(sys.argv) > 3 else "full"
rng = np.random.default_rng(0)
cin, cout, k, L = 4, 6, 3, 7
if rng_kind == "full":
    x = rng.integers(0, 256, size=(1, cin, L, L)).astype(np.uint8)
    w = rng.integers(-127, 128, size=(cin, cout, k, k)).astype(np.int8)
else:
    x = np.clip(zx + rng.integers(-8, 9, size=(1, cin, L, L)), 0, 255).astype(np.uint8)
    w = rng.integers(-8, 9, size=(cin, cout, k, k)).astype(np.int8)
sx, sw = 0.01, 0.002
b = rng.integers(-2000, 2000, size=cout).astype(np.int32) if use_bias else None
acc = F.conv_transpose2d(torch.from_numpy(x.astype(np.float64) - zx), torch.from_numpy(w.astype(np.float64)),
                         None if b is None else torch.from_numpy(b.astype(np.float64))).numpy()
real = acc * sx * sw
sy = float(np.float32((real.max() - min(real.min(), 0)) / 255)); zy = int(np.clip(np.rint(-min(real.min(), 0) / sy), 0, 255))
ref = np.clip(np.rint(acc * sx * sw / sy) + zy, 0, 255)
print("torch", torch.__version__, "engines", torch.backends.quantized.supported_engines, "x_zp", zx, "bias", use_bias, rng_kind)
for eng in torch.backends.quantized.supported_engines:
    torch.backends.quantized.engine = eng
    m = nnq.ConvTranspose2d(cin, cout, k, bias=use_bias)
    wq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), sw, 0)
    m.set_weight_bias(wq, None if b is None else torch.from_numpy((b * sx * sw).astype(np.float32)))
    m.scale, m.zero_point = sy, zy
    xq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sx, zx)
    y = m(xq).int_repr().numpy().astype(np.int64)
    print(f"{eng:8s} max |y - exact| = {np.abs(y - ref).max():.0f} units")
