"""jax.jit on CUDA: a float64 convolution followed by `* c` applies c rounded to float32. convdiff measured it
on an H200 (jax 0.11.2, CUDA 13, cuDNN 9.19): every element off by |y| * |c - fl32(c)| / |c| (3.9e-9 here,
6.9e5 x float64's bound); the same code eagerly, or on the CPU, is exact. This script poses the shape and constant convdiff ran
(findings.yaml f64_t1d_mul_scalar, through its jax-jit adapter); written after the GPU session ended, it has
run on the CPU only, where it prints 0 and 2.5e-9 (exact; c in float32 would be off): on the GPU, expect
about 3e-9 and 0."""
import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

rng = np.random.default_rng(0)
x, W, c = rng.standard_normal((1, 2, 5)), rng.standard_normal((2, 2, 3)), -1.9897383434752216


def conv(x, w):
    return jax.lax.conv_transpose(x, w, strides=(1,), padding=((0, 0),), dimension_numbers=("NCW", "OIW", "NCW"),
                                  transpose_kernel=True)


y = np.asarray(conv(x, W))  # eager float64 conv, no fusion
got = np.asarray(jax.jit(lambda x: conv(x, jnp.asarray(W)) * c)(x))
print(f"jax {jax.__version__} on {jax.devices()[0]}: max|jit - y*c| = {np.max(np.abs(got - y * c)):.3g}, "
      f"max|jit - y*float32(c)| = {np.max(np.abs(got - y * float(np.float32(c)))):.3g}")
