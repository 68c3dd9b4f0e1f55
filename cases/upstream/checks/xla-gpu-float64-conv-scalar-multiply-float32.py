"""XLA on CUDA: a float64 convolution followed by a multiply by a scalar constant applies the constant rounded to float32

Measures a jitted float64 conv_transpose followed by a multiply by a scalar constant against the eager convolution
times the constant in float64 and in float32. Exits 1 where the jitted result is off beyond float64 rounding; on a
host without a CUDA device it says so and exits 0.
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
