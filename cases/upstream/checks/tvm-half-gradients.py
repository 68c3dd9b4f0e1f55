"""float16 gradients of a Relax conv2d (relax.transform.Gradient) against float32 accumulation

Measures grad_weight of a conv2d over ones (3844 positions: 2048) and grad_input/grad_weight on normal data against
a float64 adjoint.
"""
import sys

import numpy as np
import tvm
from tvm import relax

print("tvm", tvm.__version__, "| target llvm on", tvm.target.codegen.llvm_get_system_cpu())


def gradients(x: np.ndarray, w: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """relax.transform.Gradient of sum(conv2d(x, w) * dy): (grad_input, grad_weight), in float16."""
    xv = relax.Var("x", relax.TensorType(x.shape, "float16"))
    wv = relax.Var("w", relax.TensorType(w.shape, "float16"))
    gv = relax.Var("dy", relax.TensorType(dy.shape, "float16"))
    bb = relax.BlockBuilder()
    with bb.function("main", [xv, wv, gv]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(xv, wv))
            loss = bb.emit_output(relax.op.sum(relax.op.multiply(y, gv)))
        bb.emit_func_output(loss)
    mod = relax.transform.Gradient("main", require_grads=[xv, wv])(bb.get())
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    _, grads = vm["main_adjoint"](*(tvm.runtime.tensor(a) for a in (x, w, dy)))
    return grads[0].numpy(), grads[1].numpy()


def exact(x: np.ndarray, w: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 grad_input and grad_weight of y = conv2d(x, w) (stride 1, no padding) against dy."""
    x, w, dy = (a.astype(np.float64) for a in (x, w, dy))
    k = w.shape[2]
    gw = np.einsum("ncijab,noij->ocab", np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3)), dy)
    gx = np.zeros_like(x)
    for a, b in np.ndindex(k, k):
        gx[:, :, a:a + dy.shape[2], b:b + dy.shape[3]] += np.einsum("noij,oc->ncij", dy, w[:, :, a, b])
    return gx, gw


defect = False
# 1. grad_weight: a sum over 3844 output positions of 1 * 1
x, w, dy = np.ones((1, 1, 64, 64), np.float16), np.ones((1, 1, 3, 3), np.float16), np.ones((1, 1, 62, 62), np.float16)
gx, gw = gradients(x, w, dy)
print(f"grad_weight, x = ones 1x1x64x64, 3x3 kernel, dy = ones (3844 positions): expected 3844, "
      f"got {sorted(set(gw.astype(float).ravel().tolist()))}")
defect = defect or not np.all(gw == 3844)

# 2. grad_input: 6 output channels, dy = [2048, 1, 1, 1, 1, 1], 1x1 kernel of ones
dy2 = np.array([2048, 1, 1, 1, 1, 1], np.float16).reshape(1, 6, 1, 1)
gx2, _ = gradients(np.ones((1, 1, 1, 1), np.float16), np.ones((6, 1, 1, 1), np.float16), dy2)
print(f"grad_input, 6 output channels, dy = {dy2.ravel().tolist()}, w = 1: expected 2053 (2052 in float16), "
      f"got {float(gx2.item()):g}")
defect = defect or abs(float(gx2.item()) - 2053) > 2

# 3. random normal data: error against the float32-accumulation bound (printed, data-dependent)
rng = np.random.default_rng(0)
x3 = rng.standard_normal((2, 8, 12, 12)).astype(np.float16)
w3 = rng.standard_normal((8, 8, 3, 3)).astype(np.float16)
dy3 = rng.standard_normal((2, 8, 10, 10)).astype(np.float16)
gx3, gw3 = gradients(x3, w3, dy3)
rx, rw = exact(x3, w3, dy3)
sx, sw = exact(np.abs(x3), np.abs(w3), np.abs(dy3))
for name, got, ref, scale, k in (("grad_input", gx3, rx, sx, 8 * 9), ("grad_weight", gw3, rw, sw, 2 * 10 * 10)):
    ratio = np.abs(got.astype(np.float64) - ref) / ((k + 2) * 2.0 ** -24 * scale + 2.0 ** -11 * (scale + np.abs(ref)))
    print(f"{name}, conv2d 8->8, 3x3, batch 2, normal data (K = {k}): max error/bound {ratio.max():.2f} "
          f"({int((ratio > 1).sum())}/{ratio.size} elements above 1)")

print("DEFECT: float16 conv2d gradients accumulate in float16" if defect else "gradients accumulate in float32")
sys.exit(1 if defect else 0)
