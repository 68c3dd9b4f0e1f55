"""[GPU] float64 convolution followed by a multiply by a scalar constant is computed with the constant rounded to float32

Kind: wrong-value
Ask: a fix: keep the fused output scale in double precision for an f64 convolution all the way to cuDNN (or do not fuse it).

What happens: In one `jax.jit` on CUDA, y = conv_transpose(x, w) * c in float64 (2 -> 2 channels, kernel 3, length 5 -> 7, c = -1.9897383434752216) has every element off by |y| * |c - fl32(c)| / |c|: on an H200 (jax 0.11.2, CUDA 13, cuDNN 9.19) 14 of 14 elements, max 3.937380e-9 = max |y| (4.6885) times c's float32 rounding (8.398e-10). Eager and the CPU are exact.

Expected: float64 rounding (about 1e-15 here).

Mechanism: `xla/service/gpu/transforms/cudnn_fused_conv_rewriter.cc` `FuseConvAlpha` folds c into `conv_result_scale`, kept F64 for an f64 conv; precision is lost where the scale reaches cuDNN, whose frontend took alpha/beta as float for F64 compute until NVIDIA/cudnn-frontend PR #423 (2026-07).
"""
import sys

import jax
jax.config.update("jax_enable_x64", True)
import numpy as np

print("jax", jax.__version__, "| device", jax.devices()[0])
rng = np.random.default_rng(0)
x, w, c = rng.standard_normal((1, 2, 5)), rng.standard_normal((2, 2, 3)), -1.9897383434752216
conv = lambda x, w: jax.lax.conv_transpose(x, w, (1,), ((2, 2),), dimension_numbers=("NCW", "OIW", "NCW"), transpose_kernel=True)
y = np.asarray(conv(x, w))  # eager: no fusion
got = np.asarray(jax.jit(lambda t: conv(t, w) * c)(x))
err, err32 = np.abs(got - y * c).max(), np.abs(got - y * float(np.float32(c))).max()
print(f"max |jit - conv * c| = {err:.3e}; max |jit - conv * float32(c)| = {err32:.3e}; float64 rounding ~{np.abs(y * c).max() * 2.0**-52:.1e}")
sys.exit(1 if err > 1e-12 else 0)
