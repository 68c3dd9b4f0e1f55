"""torch.ao ConvTranspose3d under qnnpack (quint8 x, qint8 per-tensor w) vs exact integers; conv_transpose2d for contrast."""
import numpy as np
import torch
import torch.ao.nn.quantized as nnq
import torch.nn.functional as F

torch.backends.quantized.engine = "qnnpack"
rng = np.random.default_rng(0)
cin, cout, k, zx = 4, 6, 3, 128
for r in (2, 3):
    shp = (5,) * r
    x = np.clip(zx + rng.integers(-8, 9, size=(1, cin, *shp)), 0, 255).astype(np.uint8)
    w = rng.integers(-8, 9, size=(cin, cout, *(k,) * r)).astype(np.int8)
    sx, sw = 0.01, 0.002
    fn = getattr(F, f"conv_transpose{r}d")
    acc = fn(torch.from_numpy(x.astype(np.float64) - zx), torch.from_numpy(w.astype(np.float64))).numpy()
    real = acc * sx * sw
    sy = float(np.float32((real.max() - min(real.min(), 0)) / 255)); zy = int(np.clip(np.rint(-min(real.min(), 0) / sy), 0, 255))
    ref = np.clip(np.rint(acc * sx * sw / sy) + zy, 0, 255)
    m = getattr(nnq, f"ConvTranspose{r}d")(cin, cout, k, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), sw, 0), None)
    m.scale, m.zero_point = sy, zy
    y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sx, zx)).int_repr().numpy().astype(np.int64)
    print(f"qnnpack ConvTranspose{r}d max |y - exact| = {np.abs(y - ref).max():.0f} units")
