"""Metamorphic relations: the runs that put a target against itself.

A relation runs a case's convolution again in another form whose exact result is known from the first:

* `determinism`: the same input again in the same process, and once in a second process (a fresh worker);
* `batch`: conv(x)[i] against conv(x[i:i+1]), for batches of 3 and 7 (and the case's own batch when > 1);
  the batch's rows beyond the case's own are its rows rolled, so every size shares rows with the others;
* `threads`: 1 thread against the default count (or, where the default is 1, against every core), each in
  a worker of its own, at the case's batch and at batch 3 (7 when the case's batch is 3);
* `layout`: channels-first against channels-last (the other layout than the case's), and the case on each of the
  target's kernel variants (Backend.kernel_variants: graph optimisation off, XNNPACK off, oneDNN off, ...)
  against its default kernels, each variant in a worker of its own;
* `scaling`: conv(2^k x, w, 2^k b) against 2^k conv(x, w, b), for the largest k that keeps every value finite
  and the smallest that keeps every input, product, partial sum and output normal (scaling_powers);
* `adjoint`: <y, conv(x, w)> against <conv_transpose(y, w), x> in float64, from the target's own outputs
  (for a transposed case, its own output against the forward conv of the same weights): no oracle;
* `subnormal`: data placed in the subnormal range by powers of two (subnormal inputs; normal inputs whose
  products and outputs are subnormal; the case's own data scaled below 2^emin) against 2^k times the same
  target's result in the normal range.

`variants(case, inputs, oracle, names)` gives the runs besides the case's own (`main`), each with the process
it runs in (`main`, `second`: a fresh worker with default settings, `threads`: a worker set to another
thread count, `kernels`: one worker per kernel variant of the target, the variant's key `kernels:<name>`). harness/numerics/relation_pairs.py turns their outputs into comparisons, and bound.py says
how far apart each pair may legitimately be.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from harness.model.case import FLOAT_DTYPES, Case, resolve_geometry
from harness.model.features import padding_only
from harness.model.shard import case_macs
from harness.numerics.inputs import NUMPY_DTYPES, Inputs

RELATIONS = ("determinism", "batch", "threads", "layout", "scaling", "adjoint", "subnormal")
PROCESS_RELATIONS = ("determinism", "threads", "layout")  # need workers of their own beside the main one
BATCH_SIZES = (3, 7)
# The batch relation runs the case at batch 7 and 7 single rows: cases beyond this many multiply-adds at
# batch 7 are left out (a model-sized convolution would take minutes on an untuned compiled path).
MAX_BATCH_MACS = 500_000_000
# Every relation re-runs a case in several forms (the threads and determinism relations in processes of their
# own, the adjoint as a second model): cases beyond this many multiply-adds are left out of all of them. On
# the model-sized layers above it, the relations' runs were about half a night's cost, and building a
# 1.2 G multiply-add layer's adjoint partner on five TVM paths at once exhausted a 24 GiB host.
MAX_RELATION_MACS = 200_000_000


class RelationError(ValueError):
    pass


def parse_relations(text: str) -> tuple[str, ...]:
    """`all` or a comma-separated list of relation names, in RELATIONS order."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return RELATIONS
    unknown = [n for n in names if n not in RELATIONS]
    if unknown or not names:
        raise RelationError(f"unknown relation(s) {', '.join(unknown) or '(none given)'}: "
                            f"use all or some of {', '.join(RELATIONS)}")
    return tuple(n for n in RELATIONS if n in names)


def output_name(relation: str) -> str:
    """A relation's record `output`."""
    return f"relation:{relation}"


@dataclass(frozen=True)
class Variant:
    """One run a relation needs besides the case's own."""

    case: Case
    inputs: Inputs
    process: str = "main"  # main | second | threads | kernels
    power: int = 0  # scaling and the scaled subnormal probe: x (and b) times 2^power


def _finfo(dtype: str) -> ml_dtypes.finfo | np.finfo:
    return ml_dtypes.finfo(NUMPY_DTYPES[dtype]) if dtype == "bfloat16" else np.finfo(NUMPY_DTYPES[dtype])


def min_normal_exponent(dtype: str) -> int:
    """emin: 2^emin is the smallest normal number of the dtype."""
    return round(math.log2(float(_finfo(dtype).smallest_normal)))


def is_subnormal(a: np.ndarray, dtype: str) -> np.ndarray:
    v = np.abs(np.asarray(a, dtype=np.float64))
    return (v > 0) & (v < float(_finfo(dtype).smallest_normal))


def applies(case: Case, relation: str) -> bool:
    """Whether the relation says anything about this case (no record where it does not)."""
    if case.geometry is None or case.expect == "invalid":
        return False
    if case.unbatched:  # its variants (other batches, the adjoint, probes) are drawn with a batch axis
        return False
    if case_macs(case) > MAX_RELATION_MACS:
        return False
    if relation == "scaling":  # linear in x and b: no epilogue, no quantization
        return case.dtype in FLOAT_DTYPES and not case.epilogue
    if relation == "adjoint":  # linear in x: the bias and epilogue are left out, quantization is not
        return case.dtype in FLOAT_DTYPES and adjoint_partner(case) is not None
    if relation == "subnormal":  # subnormal data must meet a weight: no product, no test of it
        return case.dtype in FLOAT_DTYPES and forms_products(case)
    if relation == "batch":
        return case_macs(with_batch(case, max(7, case.batch))) <= MAX_BATCH_MACS
    return True


def forms_products(case: Case) -> bool:
    """Whether some output element sums a product of an input element and a weight. False where, along some
    axis, every output reads padding only (or no output exists): every output is then the bias alone, and data
    placed in the subnormal range never reaches a multiply, so a target that flushes it passes unseen."""
    geo = case.geometry
    assert geo is not None
    return not any(padding_only(case.transpose, n, k, s, d, pb, o) for n, k, s, d, (pb, _), o in zip(
        case.input_size, case.kernel_size, case.stride, case.dilation, geo.pads, geo.out_size))


def derive(case: Case, tag: str, **changes: object) -> Case:
    """A variant of the case: its own id (case@tag), no gradients (relations judge the forward output)."""
    return dataclasses.replace(case, id=f"{case.id}@{tag}", gradients=False, **changes)  # type: ignore[arg-type]


def with_batch(case: Case, n: int) -> Case:
    return derive(case, f"batch{n}", batch=n)


def batch_rows(a: np.ndarray, b: int, n: int) -> np.ndarray:
    """n rows: a's b rows, then each row i >= b is row i % b with its elements rolled by i (same values,
    other places: any dtype, any layout)."""
    rows = [a[i] if i < b else np.roll(a[i % b].reshape(-1), i).reshape(a.shape[1:]) for i in range(n)]
    return np.ascontiguousarray(np.stack(rows))


def batched_inputs(case: Case, inputs: Inputs, n: int) -> Inputs:
    """The case's inputs at batch n (batch_rows), the residual of an epilogue rolled the same way."""
    b = case.batch
    epilogue = tuple({k: batch_rows(v, b, n) if k == "r" else v for k, v in c.items()} for c in inputs.epilogue)
    return dataclasses.replace(inputs, x=batch_rows(inputs.x, b, n), dy=None, epilogue=epilogue)


def batch_sizes(case: Case) -> list[int]:
    """The batch sizes compared row by row against single rows: 3, 7 and the case's own when > 1."""
    return sorted({*BATCH_SIZES, *((case.batch,) if case.batch > 1 else ())})


def thread_batches(case: Case) -> list[int]:
    """Two batch sizes for the threads relation: a difference can show at one and vanish at another."""
    return [case.batch, 7 if case.batch == 3 else 3]


def batch_key(case: Case, n: int) -> str:
    return "main" if n == case.batch else f"batch{n}"


def single_key(case: Case, i: int) -> str:
    """Row i alone; for a batch-1 case row 0 is the case's own input."""
    return "main" if case.batch == 1 and i == 0 else f"row{i}"


def other_layout(case: Case) -> str:
    return "channels_first" if case.channels_last else "channels_last"


def to_layout(a: np.ndarray, channels_last: bool) -> np.ndarray:
    """A channels-first array to channels-last, or back (channels_last False)."""
    return np.ascontiguousarray(np.moveaxis(a, 1, -1) if channels_last else np.moveaxis(a, -1, 1))


def plain(case: Case) -> Case:
    """The case without bias and epilogue: the linear map the scaling probes and the adjoint need."""
    return derive(case, "plain", bias=False, epilogue=()) if case.bias or case.epilogue else case


def plain_key(case: Case) -> str:
    return "plain" if case.bias or case.epilogue else "main"


def adjoint_partner(case: Case) -> Case | None:
    """The convolution whose transpose this case is (or the transposed conv of a forward case): same weight
    array, stride, dilation and groups, mapping the case's output shape back to its input shape. None where
    no such case exists (a transposed case whose output_padding exceeds what padding can absorb)."""
    geo = case.geometry
    assert geo is not None
    op = case.op.replace("conv_transpose", "conv") if case.transpose else case.op.replace("conv", "conv_transpose")
    out_pad: tuple[int, ...]
    if case.transpose:  # the forward conv reads the extended, cropped output: pads (pb, pa - extend)
        if any(e > a for (_, a), e in zip(geo.pads, geo.extend)):
            return None
        pads = tuple((b, a - e) for (b, a), e in zip(geo.pads, geo.extend))
        out_pad = (0,) * case.rank
    else:  # the transposed conv gets back the input length: the rest of it is output_padding
        pads = geo.pads
        out_pad = tuple(n - ((o - 1) * s - b - a + d * (k - 1) + 1) for n, o, s, (b, a), d, k in zip(
            case.input_size, geo.out_size, case.stride, pads, case.dilation, case.kernel_size))
        if any(p < 0 or p >= max(s, d) for p, s, d in zip(out_pad, case.stride, case.dilation)):
            return None
    partner_geo = resolve_geometry(not case.transpose, geo.out_size, case.kernel_size, case.stride, pads, out_pad,
                                   case.dilation)
    if partner_geo.out_size != case.input_size:
        return None
    return derive(case, "adjoint", op=op, in_channels=case.out_channels, out_channels=case.in_channels,
                  input_size=geo.out_size, padding=pads, output_padding=out_pad, bias=False, epilogue=(),
                  geometry=partner_geo)


def adjoint_input(case: Case) -> np.ndarray:
    """y: the partner's input, of the case's output shape (case layout, case dtype), from the case's seed."""
    assert case.geometry is not None
    rng = np.random.default_rng(case.seed + 0xAD)
    shape = (case.batch, case.out_channels, *case.geometry.out_size)
    y = rng.integers(-3, 4, size=shape).astype(np.float64) if case.data == "integers" else rng.standard_normal(shape)
    y = to_layout(y, True) if case.channels_last else np.ascontiguousarray(y)
    return y.astype(NUMPY_DTYPES[case.dtype])


def grid_step(a: np.ndarray) -> float:
    """The largest power of two that every element of `a` is an integer multiple of (inf where all are 0)."""
    v = np.abs(np.asarray(a, dtype=np.float64))
    v = v[v > 0]
    if not v.size:
        return math.inf
    m, e = np.frexp(v)  # v = m 2^e, 0.5 <= m < 1: m 2^53 is an integer, its lowest set bit the step
    n = np.ldexp(m, 53).astype(np.int64)
    return float(np.min(np.ldexp((n & -n).astype(np.float64), e - 53)))


def scaling_powers(case: Case, inputs: Inputs, ref: np.ndarray, scale: np.ndarray) -> list[int]:
    """k > 0, the largest with 2^k * (every input, partial sum and output) at most a quarter of the dtype's
    largest value; k < 0, the smallest keeping every nonzero input, product, partial sum and output at least
    2^emin (the subnormal range is the subnormal relation's). A partial sum can cancel far below every product
    and output, in whatever order the target sums: every product x w and the bias are multiples of the grid step
    step(x) step(w) (and step(b)), so is every sum of them and every rounding of one, whatever the order and the
    precision, hence none is nonzero below it, and k < 0 keeps that step at least 2^emin. Either is left out where
    no such k exists (a float16 case has little range)."""
    info, emin = _finfo(case.dtype), min_normal_exponent(case.dtype)
    mags = [np.abs(np.asarray(a, dtype=np.float64)) for a in (inputs.x, inputs.w, *([inputs.b] if inputs.b is not None else []))]
    big = max(float(np.max(scale, initial=0.0)), *(float(m.max(initial=0.0)) for m in mags[:1] + mags[2:]))
    powers = []
    if big > 0:
        k_up = math.floor(math.log2(float(info.max) / 4.0 / big))
        if k_up > 0:
            powers.append(k_up)
    step_x, step_w = grid_step(mags[0]), grid_step(mags[1])
    low = min(step_x, step_x * step_w, *(grid_step(m) for m in mags[2:]))
    if math.isfinite(low) and low > 0:
        k_down = math.ceil(emin - math.log2(low))
        if k_down < 0:
            powers.append(k_down)
    return powers


def scaled(case: Case, inputs: Inputs, k: int) -> Inputs:
    """x and b times 2^k (exact where scaling_powers chose k), w as it is."""
    f = 2.0 ** k
    dtype = NUMPY_DTYPES[case.dtype]
    b = None if inputs.b is None else (inputs.b.astype(np.float64) * f).astype(dtype)
    return dataclasses.replace(inputs, x=(inputs.x.astype(np.float64) * f).astype(dtype), b=b, dy=None)


# ---- subnormal probes ---------------------------------------------------------------------------------------
def probe_shifts(case: Case) -> dict[str, tuple[int, int]]:
    """(power of x, power of w) per targeted probe, with integers in [1, 3] as data (probe_data):
    input:   x in the subnormal range (2^(emin-2) * {1, 2, 3}), w at 2^4: products and outputs normal;
    product: x and w normal, every product subnormal (2^(emin-4) times an integer up to 9); an output is
             normal where its sum of integer products reaches 16 (most, for K >= 2), subnormal elsewhere;
    output:  the same with every output subnormal too: the sums (at most 9K) times 2^shift below 2^emin, the
             shift no lower than the subnormal grid's step (where 9K is too large for that, large sums are normal).
    Every product and partial sum is then a multiple of the subnormal grid: a target that keeps subnormals
    computes 2^shift times its normal-range result, up to the rounding of sums too long for the significand."""
    emin = min_normal_exponent(case.dtype)
    p = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}[case.dtype]
    out = max(emin - 1 - math.ceil(math.log2(9 * case.accumulation_length)), emin - p + 1)
    split = {name: (t // 2, t - t // 2) for name, t in (("product", emin - 4), ("output", out))}
    return {"input": (emin - 2, 4), **split}


def probe_case(case: Case) -> Case:
    """The targeted probes' case: the case's geometry, integer data (exact sums), no bias, no epilogue."""
    return derive(case, "subnormal", bias=False, epilogue=(), data="integers", quant=None)


def probe_data(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """x0, w0: integers in [1, 3] (float64), x0 in the case layout, from the case's seed."""
    rng = np.random.default_rng(case.seed + 0x5B)
    x0 = rng.integers(1, 4, size=(case.batch, case.in_channels, *case.input_size)).astype(np.float64)
    w0 = rng.integers(1, 4, size=case.weight_shape).astype(np.float64)
    return (to_layout(x0, True) if case.channels_last else x0), w0


def subnormal_scale_power(case: Case, inputs: Inputs, scale: np.ndarray) -> int | None:
    """k for the `scaled` probe: the case's own data times 2^k with every input and every output of the conv
    (at most its scale, |x| (*) |w| + |b|) below 2^emin."""
    emin = min_normal_exponent(case.dtype)
    top = max(float(np.max(scale, initial=0.0)),
              float(np.max(np.abs(inputs.x.astype(np.float64)), initial=0.0)))
    if top <= 0:
        return None
    return emin - 1 - math.ceil(math.log2(top))


def variants(case: Case, inputs: Inputs, oracle: tuple | None, names: tuple[str, ...]) -> dict[str, Variant]:
    """The runs the relations `names` need besides `main` (the case itself), by key."""
    names = tuple(n for n in names if applies(case, n))
    out: dict[str, Variant] = {}
    dtype = NUMPY_DTYPES.get(case.dtype)

    def batch(n: int, process: str = "main", key: str | None = None) -> None:
        k = key or batch_key(case, n)
        if k != "main":
            out[k] = Variant(with_batch(case, n), batched_inputs(case, inputs, n), process)

    if "determinism" in names:
        again = derive(case, "again")
        out["again"] = Variant(again, dataclasses.replace(inputs, dy=None))
        out["second"] = Variant(again, dataclasses.replace(inputs, dy=None), "second")
    if "batch" in names:
        sizes = batch_sizes(case)
        for n in sizes:
            batch(n)
        big = batched_inputs(case, inputs, max(7, case.batch))
        for i in range(min(max(sizes), 7)):
            if single_key(case, i) != "main":
                one = dataclasses.replace(big, x=big.x[i:i + 1], epilogue=tuple(
                    {k: v[i:i + 1] if k == "r" else v for k, v in c.items()} for c in big.epilogue))
                out[single_key(case, i)] = Variant(derive(case, f"row{i}", batch=1), one)
    if "threads" in names:
        for n in thread_batches(case):
            batch(n)
            c = case if n == case.batch else with_batch(case, n)
            out[f"threads{n}"] = Variant(derive(c, "threads"), batched_inputs(case, inputs, n), "threads")
    if "layout" in names:
        cl = other_layout(case) == "channels_last"
        moved = dataclasses.replace(inputs, x=to_layout(inputs.x, cl) if cl else to_layout(inputs.x, False), dy=None,
                                    epilogue=tuple({k: to_layout(v, cl) if k == "r" else v for k, v in c.items()}
                                                   for c in inputs.epilogue))
        out["layout"] = Variant(derive(case, "layout", layout=other_layout(case)), moved)
        out["kernels"] = Variant(derive(case, "kernels"), dataclasses.replace(inputs, dy=None), "kernels")
    if ("adjoint" in names or "subnormal" in names) and plain_key(case) != "main":
        out["plain"] = Variant(plain(case), dataclasses.replace(inputs, b=None, dy=None, epilogue=()))
    if "scaling" in names and oracle is not None:
        for k in scaling_powers(case, inputs, oracle[0], oracle[1]):
            out[f"scale{k:+d}"] = Variant(derive(case, f"scale{k:+d}"), scaled(case, inputs, k), power=k)
    if "adjoint" in names:
        partner = adjoint_partner(case)
        assert partner is not None and dtype is not None
        w = inputs.w
        out["adjoint"] = Variant(partner, Inputs(adjoint_input(case), w, None))
    if "subnormal" in names and dtype is not None:
        probe = probe_case(case)
        x0, w0 = probe_data(case)
        out["probe"] = Variant(probe, Inputs(x0.astype(dtype), w0.astype(dtype), None))
        for name, (px, pw) in probe_shifts(case).items():
            xs, ws = (x0 * 2.0 ** px).astype(dtype), (w0 * 2.0 ** pw).astype(dtype)
            out[f"probe_{name}"] = Variant(derive(probe, f"subnormal_{name}"), Inputs(xs, ws, None))
        if oracle is not None:
            k = subnormal_scale_power(case, inputs, oracle[1])
            if k is not None:
                p = plain(case)
                out["probe_scaled"] = Variant(derive(p, "subnormal_scaled"), scaled(p, dataclasses.replace(
                    inputs, b=None, epilogue=()), k), power=k)
    return out
