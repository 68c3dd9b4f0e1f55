"""JAX (XLA:CPU) convolutions flush subnormal inputs and results to zero (float32 and float64)

Measures: jax.lax.conv_general_dilated, eager and under jax.jit, on a subnormal input with normal products
(x = 2^-128, w = 16) and on normal inputs whose products and result are subnormal (x = w = 2^-65), in float32
and float64, against the exact values. Exit 1 where either comes back as zero (XLA's CPU client runs with FTZ
and DAZ set: tsl::port::ScopedFlushDenormal).
"""
import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
print("jax", jax.__version__)
flushed = False
conv = jax.jit(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "VALID"))
for dtype, (e_in, e_prod) in ((np.float32, (-128, -65)), (np.float64, (-1024, -513))):
    for what, ex, ew in (("subnormal input, normal result", e_in, 4), ("normal inputs, subnormal result", e_prod, e_prod)):
        x = np.full((1, 4, 5, 5), 2.0 ** ex, dtype)  # NCHW
        w = np.full((1, 4, 3, 3), 2.0 ** ew, dtype)  # OIHW
        got = float(np.asarray(conv(x, w))[0, 0, 0, 0])
        want = 36 * 2.0 ** ex * 2.0 ** ew
        print(f"{np.dtype(dtype).name} {what}: {got!r}, exact {want!r}")
        flushed |= got == 0.0 and want != 0.0
sys.exit(1 if flushed else 0)
