"""[XLA:CPU] A valid transposed convolution aborts the process: "Check failed: computation->Accept(this) is OK (INVALID_ARGUMENT: Window dimensions do not match RHS shape"

Kind: crash
Ask: a fix: the rewrite must not build a convolution its own shape check rejects; the call should return its result.

What happens: jax.lax.conv_transpose of a 1x1x1x3 NCHW input with a 3x2 kernel, strides (1, 2), padding ((1, 1), (1, 1)) in the forward convolution's meaning (use_consistent_padding=True), whose output is 1x1x1x4, kills the process with SIGABRT while compiling (the title's check, algebraic_simplifier.cc:586, RHS shape f32[1,1,3,1]). With XLA_FLAGS=--xla_disable_hlo_passes=algsimp it returns the right result. It needs a cropped length-1 dimension beside one with stride = kernel = 2, padding (1, 1).

Expected: an array of shape (1, 1, 1, 4), all ones, as torch.nn.functional.conv_transpose2d gives for the same shapes (https://openxla.org/xla/operation_semantics#convolution).

Mechanism: xla/hlo/transforms/simplifiers/algebraic_simplifier.cc, HandleConvolution: the rewritten convolution's kernel is the 1x3 input (RHS f32[1,1,3,1]) while the width window keeps size 2 and base dilation 2 from the original, so the operands look swapped without that dimension's window being recomputed; the CHECK at line 586 then aborts where an error status could be returned.

Symptoms:
- jax.lax.conv_transpose, eager and jitted, any dtype; tf.nn.conv2d_transpose under tf.function(jit_compile=True) alike.
- 3-D, uncropped, where a third dimension's kernel outgrows its input (2x4x1, kernel 3x2x1).
"""
import sys

import jax
import numpy as np
from jax import lax

print("jax", jax.__version__, "| jaxlib", jax.lib.__version__, flush=True)
x = np.ones((1, 1, 1, 3), np.float32)  # NCHW: height 1, width 3
w = np.ones((1, 1, 3, 2), np.float32)  # the forward conv's kernel: 3 high, 2 wide
# height: kernel 3, padding 1 -> output 1; width: stride 2 = kernel 2, padding 1 -> output (3 - 1) * 2 + 2 - 2 = 4
y = lax.conv_transpose(x, w, strides=(1, 2), padding=((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"),
                       transpose_kernel=True, use_consistent_padding=True)  # SIGABRT here
print("expected shape (1, 1, 1, 4), all ones; got", y.shape, np.asarray(y).ravel().tolist())
sys.exit(0 if y.shape == (1, 1, 1, 4) and np.all(np.asarray(y) == 1) else 1)
