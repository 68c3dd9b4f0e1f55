"""Standalone reproducers for gradient results (grad_input / grad_weight / grad_bias), torch only so far.

The script is reports/repro.py's header (x, w, b from the seed), then dy drawn after them
as harness/inputs.py does, the torch adapter's recorded gradient calls, and a float64
reference gradient written here as one loop over kernel taps (independent of the oracle's
window view), with harness/bound.py's bound for that gradient's K. Other frameworks:
ReproUnavailable (the record's translation still shows their calls).
"""

from __future__ import annotations

import textwrap

from harness.bound import accumulation_length
from harness.case import Case
from harness.records import Record

from .repro_registry import ReproUnavailable
from .repro_verdict import VERDICT_SOURCE


def gradient_part(rec: Record, case: Case) -> str:
    """Everything after the header: dy, the torch calls, the reference gradient, the verdict."""
    if rec.backend != "torch":
        raise ReproUnavailable(f"no standalone gradient script for {rec.backend} yet (torch only); its gradient "
                               "calls are in the record's translation")
    if not rec.translation.strip():
        raise ReproUnavailable("the record has no translation (the call never happened)")
    geo = case.geometry
    assert geo is not None
    body = textwrap.indent(rec.translation.strip(), " " * 4)
    return f'''
OUTPUT, OUT_SIZE, K_GRAD = {rec.output!r}, {list(geo.out_size)}, {accumulation_length(case, rec.output)}
dy = round_to_dtype(draw(rng, (BATCH, C_OUT, *OUT_SIZE)))  # drawn after x, w, b, as convdiff does
dy_case = np.ascontiguousarray(np.moveaxis(dy, 1, -1) if LAYOUT == "channels_last" else dy)

import torch
import torch.nn.functional as F


def run_framework(x, w, b, dy):
    """The gradient calls convdiff's torch adapter made (recorded translation), on {rec.device}."""
    dt = getattr(torch, DTYPE)
    x, w, dy = (torch.from_numpy(a).to(dt).to(DEVICE) for a in (x, w, dy))  # values exact in DTYPE
    b = None if b is None else torch.from_numpy(b).to(dt).to(DEVICE)
{body}
    g = dict(zip(["grad_input", "grad_weight", "grad_bias"], grads))[OUTPUT]
    return g.detach().cpu().double().numpy(), str(g.dtype).removeprefix("torch.")


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
