"""Name the bug class that explains a mismatch, by trying alternative semantics on the oracle.

Each hypothesis is one small function of the canonical case and its inputs that
yields the `Alternative`s it stands for: the float64 oracle run on a modified case
or modified inputs, or the canonical output transformed. `diagnose` returns the
name of the first alternative (in HYPOTHESES order, most specific first) whose
output has the backend's shape and lies within the error bound of it. An
alternative that cannot be told apart from the canonical output for this case
explains nothing and is skipped, and an output the canonical semantics explain
gets no diagnosis. Names are DOMAIN.md's mutant names (plus `padding_off_by_one`,
which has no mutant); adding a hypothesis is adding one function to HYPOTHESES.
Where none fits, the run's end gives the result its group's rule instead (diagnosis_rule.py).
`padding_scaled_by_dilation` goes before `same_padding_extra_before` and `padding_off_by_one`:
with pad 1 and dilation 2 its output is also one pad off, and the wider class is the one to name.

`low_precision_accumulation` names an error too large for float32 but of the size
a TF32 / float16 / bfloat16 computation would make: the oracle on inputs rounded
to that format, with float32 sums and the output rounded to it; failing that, with
sums in that format too (a much wider band, so only for short sums and errors
spread over most of the output).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from harness.judge.diagnosis_epilogue import diagnose_epilogue
from harness.judge.diagnosis_quant import diagnose_quant
from harness.model.case import Case, Geometry, resolve_geometry
from harness.numerics.bound import error_bound, gamma
from harness.numerics.inputs import Inputs
from harness.numerics.oracle import reference
from harness.numerics.quant import quant_reference

Array = np.ndarray


@dataclass
class Alternative:
    """One alternative semantics for one case: the oracle on (case, x, w, b), then `post`.

    `shape` is known before any arithmetic, so most alternatives are ruled out on
    structure alone. `round_u` > 0: the output is rounded to a lower precision with
    that unit roundoff; `sum_u` > 0: the sums are too. The bound allows for both.
    """

    case: Case
    x: Array
    w: Array
    b: Array | None
    post: Callable[[Array], Array] | None = None
    shape: tuple[int, ...] | None = None
    round_u: float = 0.0
    sum_u: float = 0.0

    def expected_shape(self) -> tuple[int, ...]:
        return self.shape if self.shape is not None else self.case.output_shape

    def evaluate(self, cache: dict | None = None) -> tuple[Array, Array]:
        """(output, scale) of the alternative, both float64; `cache` reuses oracle runs on the same objects."""
        key = (id(self.case), id(self.x), id(self.w), id(self.b))
        if cache is not None and key in cache:
            ref, scale, _ = cache[key]
        else:
            ref, scale = reference(self.case, self.x, self.w, self.b)
            if cache is not None:  # the cache keeps the keyed objects alive, so their ids stay unique
                cache[key] = (ref, scale, (self.case, self.x, self.w, self.b))
        if self.post is not None:
            ref, scale = self.post(ref), self.post(scale)
        return ref, scale


Hypothesis = Callable[[Case, Inputs], Iterator[Alternative]]


def _with_geometry(case: Case, **changes: object) -> Case | None:
    """`case` with fields changed and geometry re-resolved; None if not a valid convolution."""
    c = dataclasses.replace(case, **changes)
    geo = resolve_geometry(c.transpose, c.input_size, c.kernel_size, c.stride, c.padding,
                           c.output_padding, c.dilation)
    return None if min(geo.out_size) < 1 else dataclasses.replace(c, geometry=geo)


def _spatial_axes(case: Case) -> range:
    return range(1, 1 + case.rank) if case.channels_last else range(2, 2 + case.rank)


# ---- the hypotheses ---------------------------------------------------------------
def ignore_output_padding(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """The transposed convolution built without output_padding: a shorter output."""
    geo = case.geometry
    if case.transpose and any(case.output_padding) and geo is not None:
        extend = tuple(e - p for e, p in zip(geo.extend, case.output_padding))
        out = tuple(n - p for n, p in zip(geo.out_size, case.output_padding))
        if min(out) >= 1:
            yield Alternative(dataclasses.replace(case, geometry=Geometry(geo.pads, extend, out)),
                              inputs.x, inputs.w, inputs.b)


def zero_fill_output_padding(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """Right shape, but the output_padding rows/columns hold zeros instead of convolution values."""
    if not case.transpose or not any(case.output_padding):
        return

    def zero_tail(a: Array) -> Array:
        a = a.copy()
        for ax, p in zip(_spatial_axes(case), case.output_padding):
            idx = [slice(None)] * a.ndim
            idx[ax] = slice(a.shape[ax] - p, None)
            a[tuple(idx)] = 0.0
        return a

    yield Alternative(case, inputs.x, inputs.w, inputs.b, post=zero_tail)


def ignore_groups_in_transpose(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """Grouped transpose emulated as groups=1: C_out/groups outputs, each from every input channel."""
    if case.transpose and case.groups > 1:
        oc = case.out_channels // case.groups
        flat = dataclasses.replace(case, groups=1, out_channels=oc)
        yield Alternative(flat, inputs.x, inputs.w, None if inputs.b is None else inputs.b[:oc])


def swap_transpose_weight_axes(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """OIHW/IOHW confusion: the (C_in, C_out/g, *k) weight's buffer read with its axes swapped."""
    if case.transpose and case.weight_shape[0] > 1 and case.weight_shape[1] > 1:
        w = np.ascontiguousarray(inputs.w.swapaxes(0, 1)).reshape(inputs.w.shape)
        yield Alternative(case, inputs.x, w, inputs.b)


def conv1d_via_conv2d_bad_axis(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """1-D lowered to 2-D with the dummy axis last but stride/padding/dilation meant for it first."""
    if case.rank != 1:
        return
    padding = case.padding if isinstance(case.padding, str) else ((0, 0), case.padding[0])
    two_d = _with_geometry(
        case, op=case.op.replace("1d", "2d"), input_size=(case.input_size[0], 1),
        kernel_size=(case.kernel_size[0], 1), stride=(1, case.stride[0]), padding=padding,
        dilation=(1, case.dilation[0]), output_padding=(0, case.output_padding[0]))
    if two_d is None:
        return
    shape = two_d.output_shape

    def squeeze(a: Array) -> Array:
        return a.reshape(a.shape[0], -1, a.shape[-1]) if case.channels_last else a.reshape(*a.shape[:2], -1)

    x = inputs.x[..., None, :] if case.channels_last else inputs.x[..., None]
    flat = (shape[0], shape[1] * shape[2], shape[3]) if case.channels_last else (*shape[:2], shape[2] * shape[3])
    yield Alternative(two_d, x, inputs.w[..., None], inputs.b, post=squeeze, shape=flat)


def same_padding_extra_before(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """SAME with the odd padding (or crop) element before instead of after."""
    geo = case.geometry
    if case.padding == "same" and geo is not None and any(b != a for b, a in geo.pads):
        pads = tuple((a, b) for b, a in geo.pads)
        yield Alternative(dataclasses.replace(case, padding=pads, geometry=Geometry(pads, geo.extend, geo.out_size)),
                          inputs.x, inputs.w, inputs.b)


def padding_scaled_by_dilation(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """On a dilated axis, the pad before (a transposed conv's crop before) multiplied by the dilation."""
    geo = case.geometry
    if geo is None or not any(d > 1 and pb > 0 for (pb, _), d in zip(geo.pads, case.dilation)):
        return
    pads = tuple((pb * d, pa) for (pb, pa), d in zip(geo.pads, case.dilation))
    alt = _with_geometry(case, padding=pads, output_padding=geo.extend if case.transpose else case.output_padding)
    if alt is not None:
        yield Alternative(alt, inputs.x, inputs.w, inputs.b)


def flip_kernel(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """Convolution instead of cross-correlation: the kernel flipped along every spatial axis."""
    if any(k > 1 for k in case.kernel_size):
        w = np.ascontiguousarray(np.flip(inputs.w, axis=tuple(range(2, inputs.w.ndim))))
        yield Alternative(case, inputs.x, w, inputs.b)


def padding_off_by_one(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """One pad (or transposed crop) one larger or smaller on one side of one dim."""
    geo = case.geometry
    if geo is None:
        return
    for dim in range(case.rank):
        for side in (0, 1):
            for delta in (1, -1):
                pads = [list(p) for p in geo.pads]
                pads[dim][side] += delta
                if pads[dim][side] < 0:
                    continue
                explicit = tuple((b, a) for b, a in pads)
                out_pad = geo.extend if case.transpose else case.output_padding
                alt = _with_geometry(case, padding=explicit, output_padding=out_pad)
                if alt is not None:
                    yield Alternative(alt, inputs.x, inputs.w, inputs.b)


def _round_tf32(a: Array) -> Array:
    """Round float32 values to TF32 (10 explicit mantissa bits), ties to even."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & ~np.uint64(0x1FFF)
    return bits.astype(np.uint32).view(np.float32)


LOW_PRECISION: dict[str, tuple[Callable[[Array], Array], float]] = {
    # name: (rounding to the format, its unit roundoff; TF32 results stay float32)
    "tf32": (_round_tf32, 0.0),
    "float16": (lambda a: a.astype(np.float16), 2.0**-11),
    "bfloat16": (lambda a: a.astype(ml_dtypes.bfloat16), 2.0**-8),
}
# Sums in low precision allow gamma(K + 2, u) * scale: past this it says nothing. Even below it
# a dropped product could hide in that band, so such an explanation must also be widespread.
MAX_SUM_GAMMA = 1.0 / 16
WIDESPREAD = 0.5


def _rounded(rnd: Callable[[Array], Array], a: Array | None) -> Array | None:
    return None if a is None else np.asarray(rnd(np.asarray(a, np.float32)), np.float64)


def low_precision_accumulation(case: Case, inputs: Inputs) -> Iterator[Alternative]:
    """float32 computed from inputs rounded to TF32 / float16 / bfloat16: first with float32 sums
    (TF32 and tensor-core style; the output rounded to the format), then with sums in the format."""
    if case.dtype != "float32":
        return
    rounded = {name: tuple(_rounded(rnd, a) for a in (inputs.x, inputs.w, inputs.b))
               for name, (rnd, _) in LOW_PRECISION.items()}
    for name, (_, u) in LOW_PRECISION.items():
        yield Alternative(case, *rounded[name], round_u=u)
    for name, (_, u) in LOW_PRECISION.items():
        if u and gamma(case.accumulation_length + 2, u) <= MAX_SUM_GAMMA:
            yield Alternative(case, *rounded[name], round_u=u, sum_u=u)


HYPOTHESES: list[Hypothesis] = [
    ignore_output_padding,
    zero_fill_output_padding,
    ignore_groups_in_transpose,
    swap_transpose_weight_axes,
    padding_scaled_by_dilation,
    same_padding_extra_before,
    conv1d_via_conv2d_bad_axis,
    flip_kernel,
    padding_off_by_one,
    low_precision_accumulation,
]


# ---- matching ------------------------------------------------------------------------
def _alt_bound(case: Case, alt: Alternative, ref: Array, scale: Array, tf32: bool) -> Array:
    bound = error_bound(alt.case, ref, scale, tf32)
    if alt.round_u:  # the output rounded to the format, and the sum before the bias too
        bound = bound + alt.round_u * np.abs(ref)
        if alt.b is not None:
            shape = [1] * ref.ndim
            shape[-1 if case.channels_last else 1] = -1
            bound = bound + alt.round_u * np.abs(ref - alt.b.reshape(shape))
    if alt.sum_u:
        bound = bound + gamma(alt.case.accumulation_length + 2, alt.sum_u) * scale
    return bound


def explains(case: Case, alt: Alternative, out64: Array, canonical: tuple[Array, Array, Array] | None,
             tf32: bool = False, cache: dict | None = None) -> bool:
    """Does the alternative reproduce `out` within its bound, while differing from the canonical output?"""
    if tuple(out64.shape) != tuple(alt.expected_shape()):
        return False
    ref, scale = alt.evaluate(cache)
    if canonical is not None and canonical[0].shape == ref.shape and np.all(np.abs(ref - canonical[0]) <= canonical[2]):
        return False  # the alternative predicts what the canonical semantics predict: it explains nothing
    if (alt.sum_u and canonical is not None and canonical[0].shape == out64.shape
            and np.mean(np.abs(out64 - canonical[0]) > canonical[2]) < WIDESPREAD):
        return False  # a few wrong elements are a semantic bug, not rounding everywhere
    return bool(np.all(np.abs(out64 - ref) <= _alt_bound(case, alt, ref, scale, tf32)))


def diagnose(case: Case, inputs: Inputs, out: np.ndarray, tf32: bool = False,
             oracle: tuple[Array, Array] | None = None) -> str | None:
    """The name of the alternative semantics that reproduces `out` within the bound, or None.

    `oracle`: the canonical (output, scale) when the caller has it already.
    """
    if case.geometry is None:
        return None
    out64 = np.asarray(out, dtype=np.float64)
    if not np.all(np.isfinite(out64)):
        return None
    if case.quantized:
        ref = oracle[0] if oracle is not None else None
        if ref is None:
            assert inputs.quant is not None
            ref = quant_reference(case, inputs.x, inputs.w, inputs.b, inputs.quant)[0]
        return diagnose_quant(case, inputs, out64, ref)
    if case.epilogue:
        ref, scale, *trace = oracle if oracle is not None else reference(
            case, inputs.x, inputs.w, inputs.b, inputs.epilogue)
        return diagnose_epilogue(case, inputs, out64,
                                 (ref, error_bound(case, ref, scale, tf32, trace=trace[0] if trace else None)))
    can_ref, can_scale = oracle if oracle is not None else reference(case, inputs.x, inputs.w, inputs.b)
    cache = {(id(case), id(inputs.x), id(inputs.w), id(inputs.b)): (can_ref, can_scale, (case, inputs))}
    canonical = (can_ref, can_scale, error_bound(case, can_ref, can_scale, tf32))
    if out64.shape == can_ref.shape and np.all(np.abs(out64 - can_ref) <= canonical[2]):
        return None  # the canonical semantics explain it: there is nothing to diagnose
    for hypothesis in HYPOTHESES:
        for alt in hypothesis(case, inputs):
            if explains(case, alt, out64, canonical, tf32, cache):
                return hypothesis.__name__
    return None
