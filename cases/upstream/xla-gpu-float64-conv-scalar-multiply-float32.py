"""XLA on CUDA: a float64 convolution followed by a multiply by a scalar constant applies the constant rounded to float32

Project: openxla/xla (https://github.com/openxla/xla/issues)
Upstream: none found
Related: https://github.com/NVIDIA/cudnn-frontend/pull/423 (cuDNN frontend: alpha/beta in double for F64 compute, merged 2026-07)
Checked: 2026-11-28, jax 0.10.2 on the CPU (this script; no GPU here); the defect measured 2026-11-26 with jax 0.11.2, CUDA 13, cuDNN 9.19 on an H200; searched openxla/xla and jax-ml/jax issues for "float64 convolution fused scale alpha float32 cuDNN", "XLA GPU f64 conv scalar multiply precision"

What happens: in one jax.jit on CUDA, y = conv_transpose(x, w) * c in float64 (conv_transpose1d 2 -> 2,
kernel 3, input length 5, output length 7, c = -1.9897383434752216) comes back with every element off by
|y| * |c - fl32(c)| / |c|: measured on an H200 (jax 0.11.2, CUDA 13, cuDNN 9.19) 14 of 14 elements off, max
|err| 3.937380e-9 = max |y| (4.6885) * 8.398e-10 (c's float32 rounding) to 7 digits, 6.9e5 times float64's
rounding bound. The same computation eagerly (no fusion), on the CPU, or with a per-channel scale between the
convolution and the scalar is exact. This script poses that computation; on a CPU host it only says so.

Expected: a float64 program computes in float64: |jit - conv * c| at float64 rounding (about 1e-15 here).
Reference: the eager float64 convolution times c, in NumPy.

Mechanism: as far as measured, XLA's GPU convolution rewrite fuses the scalar multiply into the cuDNN
convolution as its output scale (alpha), and that scale is passed in single precision for a double
convolution (the cuDNN frontend took alpha/beta as float for F64 compute before PR #423). Not read in XLA's
source.

Host: CUDA GPUs only (XLA's cuDNN path). On CPU the result is exact, and the script prints "not shown".
"""
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

device = jax.devices()[0]
print(f"jax {jax.__version__}, default device {device} (platform {device.platform})")
rng = np.random.default_rng(0)
x, w, c = rng.standard_normal((1, 2, 5)), rng.standard_normal((2, 2, 3)), -1.9897383434752216


def conv(x: jax.Array, w: jax.Array) -> jax.Array:
    return jax.lax.conv_transpose(x, w, strides=(1,), padding=((2, 2),), dimension_numbers=("NCW", "OIW", "NCW"),
                                  transpose_kernel=True)


y = np.asarray(conv(x, w))                                  # eager float64 conv, no fusion
got = np.asarray(jax.jit(lambda t: conv(t, jnp.asarray(w)) * c)(x))
err = np.abs(got - y * c)
err32 = np.abs(got - y * float(np.float32(c)))
print(f"output {got.shape} {got.dtype}: max |jit - conv*c| = {err.max():.3e}; max |jit - conv*float32(c)| = "
      f"{err32.max():.3e}; expected at float64 rounding (~{np.abs(y * c).max() * 2.0**-52:.1e})")
if device.platform != "gpu" and err.max() <= 1e-12:
    print(f"not shown on this host: no CUDA device (platform {device.platform}); the defect is in XLA's CUDA path")
    sys.exit(0)
if err.max() > 1e-12:
    print("defect shown: the scalar was applied in float32" if err32.max() < err.max() else
          "defect shown: float64 result off beyond float64 rounding")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
