"""Standalone reproducers for gradient results (grad_input / grad_weight / grad_bias).

The script is reports/repro/script.py's header (x, w, b from the seed), then dy drawn after them
as harness/numerics/inputs.py does, the adapter's gradient calls, and a float64 reference gradient
written here as one loop over kernel taps (independent of the oracle's window view), with
harness/numerics/bound.py's bound for that gradient's K. Frameworks: torch (autograd), TensorFlow
and Keras (tf.GradientTape, the recorded lines), Paddle (paddle.grad around the adapter's
call), JAX (jax.vjp around the adapter's lax lines). Others (TVM's Relax gradient):
ReproUnavailable; the record's translation still shows their calls.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from backends.jax.eager import lax_call
from backends.tensorflow.util import weight_transpose
from harness.execution.records import Record
from harness.model.case import Case
from harness.numerics.bound import accumulation_length
from reports.repro.frameworks import paddle_call, paddle_tensor, paddle_tf32, tf_imports, tf_tf32
from reports.repro.jax import JAX_SETUP
from reports.repro.registry import ReproUnavailable, require_lines
from reports.repro.verdict import VERDICT_SOURCE

NAMES = '["grad_input", "grad_weight", "grad_bias"]'  # the order of `grads` in every framework's lines


def _recorded(rec: Record) -> str:
    if not rec.translation.strip():
        raise ReproUnavailable("the record has no translation (the call never happened)")
    return rec.translation.strip()


def _torch(rec: Record, case: Case) -> str:
    body = textwrap.indent(_recorded(rec), " " * 4)
    return f'''
import torch
import torch.nn.functional as F


def run_framework(x, w, b, dy):
    """The gradient calls convdiff's torch adapter made (recorded translation), on {rec.device}."""
    dt = getattr(torch, DTYPE)
    if DEVICE == "cuda":
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = TF32
    x, w, dy = (torch.from_numpy(a).to(dt).to(DEVICE) for a in (x, w, dy))  # values exact in DTYPE
    b = None if b is None else torch.from_numpy(b).to(dt).to(DEVICE)
{body}
    g = dict(zip({NAMES}, grads))[OUTPUT]
    return g.detach().cpu().double().numpy(), str(g.dtype).removeprefix("torch.")
'''


def _tensorflow(rec: Record, case: Case) -> str:
    """tf.GradientTape around the recorded forward (tf.nn, or the Keras layer whose kernel
    gradient comes back in TF's filter layout and is permuted to the canonical one)."""
    keras = rec.backend == "tensorflow-keras"
    body = textwrap.indent(_recorded(rec), " " * 8)
    perm = weight_transpose(case)[0]
    back = (f"\n    if OUTPUT == \"grad_weight\":  # the layer's kernel is in TF's filter layout {perm}"
            f"\n        g = np.transpose(g, np.argsort({perm}))") if keras else ""
    return "\n" + tf_imports(body, keras) + f'''


def run_framework(x, w, b, dy):
    """The gradient calls convdiff's {rec.backend} adapter made (recorded translation), on {rec.device}."""{tf_tf32(rec)}
    with tf.device("/GPU:0" if DEVICE == "cuda" else "/CPU:0"):
        x, w_canonical, dy = tf.cast(x, DTYPE), tf.cast(w, DTYPE), tf.cast(dy, DTYPE)  # exact: DTYPE values
        b = None if b is None else tf.cast(b, DTYPE)
{body}
    g = dict(zip({NAMES}, grads))[OUTPUT]
    dtype = g.dtype.name
    g = tf.cast(g, tf.float64).numpy(){back}
    return g, dtype
'''


def _paddle(rec: Record, case: Case) -> str:
    """paddle.grad around the adapter's own F.<op> line."""
    call = paddle_call(rec, case)
    return f'''
import paddle
import paddle.nn.functional as F


def run_framework(x, w, b, dy):
    """The gradient calls convdiff's {rec.backend} adapter made, on {rec.device}."""
    paddle.set_device("gpu" if DEVICE == "cuda" else "cpu"){paddle_tf32(rec)}

    def t(a):  # exact: the values are DTYPE values
        return {paddle_tensor(case)}

    x, w, b, dy = t(x), t(w), None if b is None else t(b), t(dy)
    leaves = [v for v in (x, w, b) if v is not None]
    for v in leaves:
        v.stop_gradient = False
    {call}
    grads = paddle.grad([y], leaves, grad_outputs=[dy])
    g = dict(zip({NAMES}, grads))[OUTPUT]
    return g.astype("float64").numpy(), str(g.dtype).removeprefix("paddle.")
'''


def _jax(rec: Record, case: Case) -> str:
    """jax.vjp of the adapter's own lax lines, pulled back from dy."""
    plan = lax_call(case)
    args = "x, w, b" if case.bias else "x, w"
    lines = [f"def f({args}):", *(f"    {ln}" for ln in plan.lines(case.bias)), "    return y",
             f"y, pullback = jax.vjp(f, {args})", "grads = pullback(dy)"]
    require_lines(rec, lines)
    body = textwrap.indent("\n".join([*(f"# exact identity: {n}" for n in plan.notes), *lines]), " " * 4)
    return JAX_SETUP + f'''

def run_framework(x, w, b, dy):
    """The gradient calls convdiff's jax adapter made, on {rec.device} (no precision override, as convdiff)."""
    device = jax.devices("cuda" if DEVICE == "cuda" else "cpu")[0]
    x, w, dy = put(x, device), put(w, device), put(dy, device)
    b = None if b is None else put(b, device)
{body}
    g = dict(zip({NAMES}, grads))[OUTPUT]
    return np.asarray(g.astype(jnp.float64)), str(g.dtype)
'''


RUNNERS: dict[str, Callable[[Record, Case], str]] = {
    "torch": _torch, "tensorflow": _tensorflow, "tensorflow-keras": _tensorflow,
    "paddle": _paddle, "paddle-output-size": _paddle, "jax": _jax,
}


def gradient_part(rec: Record, case: Case) -> str:
    """Everything after the header: dy, the framework's gradient calls, the reference gradient, the verdict."""
    make = RUNNERS.get(rec.backend)
    if make is None:
        raise ReproUnavailable(f"no standalone gradient script for {rec.backend} (torch, tensorflow, tensorflow-keras, "
                               "paddle, jax); its gradient calls are in the record's translation")
    runner = make(rec, case).strip("\n")
    geo = case.geometry
    assert geo is not None
    return f'''
OUTPUT, OUT_SIZE, K_GRAD = {rec.output!r}, {list(geo.out_size)}, {accumulation_length(case, rec.output)}
dy = round_to_dtype(draw(rng, (BATCH, C_OUT, *OUT_SIZE)))  # drawn after x, w, b, as convdiff does
dy_case = (np.moveaxis(dy, 1, -1) if LAYOUT == "channels_last" else dy).copy()  # C-order strides, size-1 axes included

{runner}

def taps(size, out):
    """(kernel tap, window slice) pairs: input positions o*s + t*d for every output position o."""
    for tap in np.ndindex(*KERNEL):
        yield tap, tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, DILATION, out, STRIDE))


def flat(a):
    """(N, G, C, *spatial) -> (N, G, C, positions)."""
    return a.reshape(*a.shape[:3], -1)


def gradients(x, w, dy):
    """Float64 gradients by scattering dy through every tap (channels first)."""
    n, g = x.shape[0], GROUPS
    if not TRANSPOSE:  # y = conv(pad(x)); x (N, C, L), w (O, C/g, k)
        xp = np.pad(x, [(0, 0), (0, 0), *PADS])
        o, cg = w.shape[:2]
        xg, wg = xp.reshape(n, g, cg, *xp.shape[2:]), w.reshape(g, o // g, cg, *KERNEL)
        dyg = dy.reshape(n, g, o // g, *dy.shape[2:])
        gx, gw = np.zeros_like(xg), np.zeros_like(wg)
        for tap, win in taps(xp.shape[2:], dy.shape[2:]):
            gx[(slice(None),) * 3 + win] += np.einsum("ngo...,goc->ngc...", dyg, wg[(Ellipsis, *tap)])
            gw[(Ellipsis, *tap)] = np.einsum("ngcp,ngop->goc", flat(xg[(slice(None),) * 3 + win]), flat(dyg))
        crop = tuple(slice(pb, m - pa) for (pb, pa), m in zip(PADS, xp.shape[2:]))
        gx = gx.reshape(xp.shape)[(slice(None), slice(None), *crop)]
    else:  # y = crop(extend(scatter(x, w))); w (C, O/g, k): dy goes back through the crop first
        cin, og = w.shape[:2]
        full = [(m - 1) * s + d * (kk - 1) + 1 + e for m, s, d, kk, e in zip(x.shape[2:], STRIDE, DILATION, KERNEL, EXTEND)]
        dyf = np.zeros((n, g * og, *full))
        dyf[(slice(None), slice(None), *(slice(pb, f - pa) for (pb, pa), f in zip(PADS, full)))] = dy
        xg, wg = x.reshape(n, g, cin // g, *x.shape[2:]), w.reshape(g, cin // g, og, *KERNEL)
        dyg = dyf.reshape(n, g, og, *full)
        gx, gw = np.zeros_like(xg), np.zeros_like(wg)
        for tap, win in taps(full, x.shape[2:]):
            gx += np.einsum("ngo...,gco->ngc...", dyg[(slice(None),) * 3 + win], wg[(Ellipsis, *tap)])
            gw[(Ellipsis, *tap)] = np.einsum("ngcp,ngop->gco", flat(xg), flat(dyg[(slice(None),) * 3 + win]))
        gx = gx.reshape(x.shape)
    return {{"grad_input": gx, "grad_weight": gw.reshape(w.shape), "grad_bias": dy.sum(axis=(0, *range(2, dy.ndim)))}}


ref = gradients(x, w, dy)[OUTPUT]
scale = gradients(np.abs(x), np.abs(w), np.abs(dy))[OUTPUT]
if OUTPUT == "grad_input" and LAYOUT == "channels_last":
    ref, scale = np.moveaxis(ref, 1, -1), np.moveaxis(scale, 1, -1)

K_ACC, WHAT, ARGS = K_GRAD, OUTPUT, (x_case, w, b, dy_case)
''' + VERDICT_SOURCE
