"""torch.ao quantized Conv1d/Conv2d/ConvTranspose2d under the fbgemm engine, u8 activations over their full range,
s8 weights in [-127, 127], against exact integers. On an x86 CPU without AVX512-VNNI, fbgemm multiplies
u8 x s8 with vpmaddubsw, which adds two adjacent products of the im2col row into a saturating int16, so
pair sums beyond 32767 are clamped. fbgemm decides from CPUID (ONEDNN_MAX_CPU_ISA does not change it);
with VNNI (vpdpbusd, int32) every line prints 0."""
import numpy as np
import torch
import torch.ao.nn.quantized as nnq
import torch.nn.functional as F

torch.backends.quantized.engine = "fbgemm"
print("torch", torch.__version__, "engine fbgemm, cpu capability", torch.backends.cpu.get_cpu_capability())

# 1. The smallest: one input channel, two taps, x = 255, w = 127. Exact acc = 2 * 255 * 127 = 64770.
m = nnq.Conv1d(1, 1, 2, bias=False)
m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.full((1, 1, 2), 127, dtype=torch.int8), 1.0, 0), None)
m.scale, m.zero_point = 1000.0, 0  # y = round(acc / 1000): exact 65, saturated 32767 -> 33
y = m(torch._make_per_tensor_quantized_tensor(torch.full((1, 1, 2), 255, dtype=torch.uint8), 1.0, 0))
print(f"conv1d 1->1, k=2, x=255, w=127: y = {int(y.int_repr().item())}, exact 65 (int16-saturated pair: 33)")

# 2. Ordinary data: random full-range x (zero point 128) and w, a 3x3 conv2d and conv_transpose2d, 16 -> 6 channels.
rng = np.random.default_rng(0)
cin, cout, k, L, zx, sx, sw = 16, 6, 3, 7, 128, 0.01, 0.002
x = rng.integers(0, 256, size=(1, cin, L, L)).astype(np.uint8)
for name, transposed in (("conv2d", False), ("conv_transpose2d", True)):
    w = rng.integers(-127, 128, size=(cin, cout, k, k) if transposed else (cout, cin, k, k)).astype(np.int8)
    fn = F.conv_transpose2d if transposed else F.conv2d
    acc = fn(torch.from_numpy(x.astype(np.float64) - zx), torch.from_numpy(w.astype(np.float64))).numpy()
    lo, hi = min(acc.min(), 0) * sx * sw, max(acc.max(), 0) * sx * sw
    sy = float(np.float32((hi - lo) / 255)); zy = int(np.clip(np.rint(-lo / sy), 0, 255))
    exact = np.clip(np.rint(acc * sx * sw / sy) + zy, 0, 255)
    m = (nnq.ConvTranspose2d if transposed else nnq.Conv2d)(cin, cout, k, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), sw, 0), None)
    m.scale, m.zero_point = sy, zy
    y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sx, zx)).int_repr().numpy().astype(np.int64)
    off = np.abs(y - exact)
    print(f"{name}: max |y - exact| = {off.max():.0f} units of y on {int((off > 1).sum())}/{off.size} elements")
