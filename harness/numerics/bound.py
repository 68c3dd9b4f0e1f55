"""The per-element error bound: the one place where tolerances are decided.

Inputs are exact in the case dtype T (see inputs.py), so all error comes from the
framework's arithmetic. An output element is a sum of at most K = C_in/groups *
prod(kernel) products plus the bias. With unit roundoff u of the accumulation
precision, the classical inner-product bound (Higham, Thm 3.5) gives

    |out - ref| <= gamma(n) * scale,    gamma(n) = n*u / (1 - n*u),   n = K + 2,

where scale = |x| (*) |w| + |b| is the same convolution on absolute values (the
oracle computes it) and the 2 covers the bias add and one extra rounding.

* float32 / float64: u = u_T (2^-24 / 2^-53).
* float16 / bfloat16: frameworks accumulate in float32 and round the result to T,
  possibly before and after the bias: u = 2^-24, plus u_T * (scale + |ref|).
* TF32 (CUDA): products of inputs rounded to a 10-bit mantissa add 2 * 2^-11 * scale.
* Integer data whose scale stays below 2^p (p = significand bits of T, at most 24):
  every partial sum is an exactly representable integer, so the bound is 0.
* n * (smallest subnormal of T) absorbs underflow in products.

Gradients (harness/numerics/oracle_grad.py) are sums of products too, judged with the same
formula; only K and the scale change. The scale is the gradient computed on |x|, |w|,
|dy|, and K is the longest sum behind one element of that gradient:

* grad_input:  C_out/groups * prod(kernel) (dy times w, for a conv and a transposed conv);
* grad_weight: N * prod(output size) for a conv, N * prod(input size) for a transposed
  conv (x times dy over the batch and every position): far longer than the forward K;
* grad_bias:   N * prod(output size) (a plain sum of dy).

Epilogues (harness/numerics/epilogue.py). The conv's bound E (above, at the conv output z) is
carried through each op with a magnitude M (M = scale at z: a bound on the sum of absolute
terms behind the value), with u the unit roundoff of the case dtype T:

* affine ops y = a*v + t (scale, divide, shift, the scalars, batch_norm):
      E' = |a| E + f u (|a| M + |t|) + u |y|,     M' = |a| M + |t|
  (for batch_norm |t| stands for |a*mean| + |beta|: t = beta - mean*a may cancel, the terms
  an implementation forms it from do not)
  The f u term is the legitimate difference a fold makes: a compiler may multiply a into
  the weights and bias (`fl(a*w)`, relative error u per weight, 2u through a reciprocal for
  divide), so the conv then runs on other weights; f = 2, and 6 for batch_norm, whose a and t
  take a square root, a division and a product to form. u|y| rounds the op's own result.
* activations y = f(v): E' = L E + k u (|y| + |v|) + u |y|,   M' = L M + |f(0)|
  with L the Lipschitz constant of f (relu, relu6, leaky_relu, clamp, tanh 1; sigmoid 1/4;
  gelu 1.13; silu 1.1; hardswish 1.5), and k = 8 ulps for the transcendental ones (sigmoid,
  tanh, gelu, silu, hardswish: vectorized approximations, evaluated in float32 for float32,
  sometimes in T for half types), 0 for the piecewise-linear ones.
* residual y = v + r: E' = E + u |y|,   M' = M + |r|.

The bound of the output is the last E. An implementation that fuses ops, folds constants,
keeps float32 between ops or rounds after each does no worse than each term allows.

Quantized cases (dtype uint8 | int8, harness/numerics/quant.py) are judged in units of y: the
accumulation is exact integer arithmetic, and the requantization multiplier may be rounded
to float32 (or a fixed-point multiplier) before it is applied, so one unit of y is allowed
(quant_units). Errors and `bound_ratio` are then in units of y. An adapter declares the rounding
its kernel documents (`Output.quant_rounding`, a key of QUANT_ROUNDING), and `quant_units` derives
the allowance from it: the kernel rounds v' = acc * M' with M' its stored multiplier, so
|v' - v| <= |v| * 2^-22 <= QUANT_SLACK for an output that does not saturate (|v| < 2^9), and its
result r is within rho of v' (rho: 1/2 for a rounding to nearest with any tie rule; TFLite's
fixed-point multiplier rounds twice, to the high 32 bits and then by the shift, so rho < 1/2 +
1/2^(shift+1) <= 1; truncation rho < 1). The truth t = round_half_even(v) is within 1/2 of v, so
|r - t| <= rho + QUANT_SLACK + 1/2, an integer: floor(rho + QUANT_SLACK + 1/2) units (1 for each
rounding above; a tie rule alone never moves a result by more than one unit).
"""

from __future__ import annotations

import math

import numpy as np

from harness.model.case import Case
from harness.numerics.epilogue import Trace
from harness.numerics.inputs import NUMPY_DTYPES, SIGNIFICAND_BITS

UNIT_ROUNDOFF = {name: 2.0 ** -SIGNIFICAND_BITS[name] for name in SIGNIFICAND_BITS}
FLOAT32_U = 2.0**-24
TF32_U = 2.0**-11
HALF_TYPES = ("float16", "bfloat16")
# Activations: Lipschitz constant L, value at 0, and ulps of their own evaluation (k above).
LIPSCHITZ = {"relu": 1.0, "relu6": 1.0, "leaky_relu": 1.0, "clamp": 1.0, "tanh": 1.0, "sigmoid": 0.25,
             "gelu": 1.13, "silu": 1.1, "hardswish": 1.5}
AT_ZERO = {"sigmoid": 0.5}
TRANSCENDENTAL_ULPS = {"sigmoid": 8.0, "tanh": 8.0, "gelu": 8.0, "silu": 8.0, "hardswish": 8.0}
FOLD_ULPS = {"batch_norm": 6.0, "divide": 2.0}  # others: 2 (one rounding of a*w, one of a*b + t)
QUANT_SLACK = 2.0**-13  # |v' - v|: a float32 or Q31 multiplier's relative error (<= 2^-22) times |v| < 2^9
# rho per declared requantization rounding: how far the kernel's result may be from the value it rounds
QUANT_ROUNDING = {
    "half_to_even": 0.5,            # ONNX QLinearConv's rule (the oracle's), float multiplier
    "half_away_from_zero": 0.5,     # e.g. std::round of a float product
    "fixed_point_half_away": 1.0,   # TFLite MultiplyByQuantizedMultiplier: two roundings half away from zero
    "truncate": 1.0,                # a conversion to int without rounding
}


def _tiny(dtype: str) -> float:
    import ml_dtypes

    info = ml_dtypes.finfo(NUMPY_DTYPES[dtype]) if dtype == "bfloat16" else np.finfo(NUMPY_DTYPES[dtype])
    return float(info.smallest_subnormal)


def is_exact(case: Case, scale: np.ndarray) -> bool:
    """Integer data whose every partial sum is representable: no rounding at all."""
    p = min(SIGNIFICAND_BITS[case.dtype], 24)
    return case.data == "integers" and (scale.size == 0 or float(scale.max()) <= 2.0**p)


def gamma(n: int, u: float) -> float:
    nu = n * u
    return nu / (1.0 - nu) if nu < 1.0 else float("inf")


def accumulation_length(case: Case, output: str = "out") -> int:
    """K: the most products (or terms) summed into one element of `output`."""
    assert case.geometry is not None or output == "out"
    if output == "out" or output.startswith("relation:"):  # a relation compares forward outputs
        return case.accumulation_length
    if output == "grad_input":
        return (case.out_channels // max(case.groups, 1)) * math.prod(case.kernel_size)
    positions = case.input_size if output == "grad_weight" and case.transpose else case.geometry.out_size
    return case.batch * math.prod(positions)


def quant_units(rounding: str = "half_to_even") -> float:
    """Units of y a quantized output may be off for a kernel declaring `rounding` (see above)."""
    return float(math.floor(QUANT_ROUNDING[rounding] + QUANT_SLACK + 0.5))


def error_bound(case: Case, ref: np.ndarray, scale: np.ndarray, tf32: bool = False,
                output: str = "out", trace: Trace | None = None, rounding: str = "half_to_even") -> np.ndarray:
    """Allowed |out - ref| per element of `output` (float64, same shape as ref).

    `trace`: an epilogue case's steps (the oracle's third value); the conv's bound is then
    taken at the conv output and carried through the epilogue. `rounding`: a quantized kernel's
    declared requantization rounding (QUANT_ROUNDING)."""
    if case.quantized:
        return np.full(np.shape(ref), quant_units(rounding))
    if trace is not None and trace.steps:
        return epilogue_bound(case, trace, conv_bound(case, trace.z, scale, tf32), scale)
    return conv_bound(case, ref, scale, tf32, output)


def epilogue_bound(case: Case, trace: Trace, e: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The conv's bound `e` at z, with magnitude `m`, carried through each epilogue step."""
    u = UNIT_ROUNDOFF[case.dtype]
    for step in trace.steps:
        y = np.abs(step.y)
        if step.name in LIPSCHITZ:
            lip = LIPSCHITZ[step.name]
            e = lip * e + TRANSCENDENTAL_ULPS.get(step.name, 0.0) * u * (y + np.abs(step.v)) + u * y
            m = lip * m + AT_ZERO.get(step.name, 0.0)
        elif step.name == "residual":
            e, m = e + u * y, m + np.abs(step.t)
        else:
            a, t = np.abs(step.a), step.t_mag
            e = a * e + FOLD_ULPS.get(step.name, 2.0) * u * (a * m + t) + u * y
            m = a * m + t
    return np.broadcast_to(e, trace.steps[-1].y.shape).copy()


def conv_bound(case: Case, ref: np.ndarray, scale: np.ndarray, tf32: bool = False,
               output: str = "out", underflow: bool = True) -> np.ndarray:
    """The conv's own bound (no epilogue), per element of `output`; `underflow=False` leaves out the
    n * tiny term, for data whose every product and partial sum lies on the subnormal grid."""
    if is_exact(case, scale):
        return np.zeros_like(scale)
    n = accumulation_length(case, output) + 2
    half = case.dtype in HALF_TYPES
    u_acc = FLOAT32_U if half else UNIT_ROUNDOFF[case.dtype]
    allowed = gamma(n, u_acc) * scale
    if half:
        allowed += UNIT_ROUNDOFF[case.dtype] * (scale + np.abs(ref))
    if tf32 and case.dtype == "float32":
        allowed += 2.0 * TF32_U * scale
    if underflow:
        allowed += n * _tiny(case.dtype)
    return allowed


# ---- metamorphic relations (harness/numerics/relations.py): one target against itself --------------------
# Each relation compares two computations A and B of the same target whose exact values are equal (or exactly
# 2^k apart). Each is within its own forward bound of its exact value, so |A - B| is at most the sum of the two
# bounds; `within_bound` means every element is inside it, `pass` that A and B are the same bits.


def pair_bound(case: Case, ref: np.ndarray, scale: np.ndarray, trace: Trace | None = None,
               rounding: str = "half_to_even") -> np.ndarray:
    """determinism, batch, threads, layout: one exact value computed twice (again, in another batch, on
    other threads, in the other layout), each within error_bound of it: twice the forward bound (quantized
    cases: two units of y)."""
    return 2.0 * error_bound(case, ref, scale, False, "out", trace, rounding)


def scaling_bound(case: Case, ref: np.ndarray, scale: np.ndarray, k: int) -> np.ndarray:
    """scaling: conv(2^k x, w, 2^k b) against 2^k conv(x, w, b). Where 2^k x, 2^k b and every product,
    partial sum and output stay normal and finite (relations.scaling_powers chooses k so), the exact values
    are exactly 2^k apart, so the difference is the scaled computation's bound plus 2^k times the plain one's; only the n * tiny terms do
    not scale. A kernel that scales internally (Winograd's transforms, a blocked sum) is still exact under a
    power of two: anything beyond this bound is a kernel whose path depends on magnitude."""
    f = 2.0 ** k
    return conv_bound(case, f * ref, f * scale) + f * conv_bound(case, ref, scale)


def subnormal_bound(case: Case, ref: np.ndarray, scale: np.ndarray, k: int, moved: np.ndarray | None = None,
                    on_grid: bool = False) -> np.ndarray:
    """subnormal: a computation on data moved into the subnormal range by a power of two 2^k against 2^k
    times the same target's computation in the normal range (ref, scale: the latter's exact value and scale).

    * on_grid (the targeted probes: small positive integers times powers of two): every product and every
      partial sum is a multiple of the subnormal grid, so nothing underflows and the relative bound of the
      normal-range sum holds for both: 2 * 2^k * conv_bound without its n * tiny term (0 for exact sums).
    * otherwise (the case's own data scaled down): rounding 2^k x to the subnormal grid moves the exact value
      by at most `moved` = |fl(2^k x) - 2^k x| (*) |w| (the oracle computes it), and each of the n roundings of
      the scaled sum may lose up to one subnormal step: conv_bound at the scaled values, n * tiny included.

    A target that flushes subnormals to zero (FTZ/DAZ) loses up to 2^emin per term: beyond this bound
    wherever the scaled values are not themselves within n * tiny of zero."""
    f = 2.0 ** k
    if on_grid:
        return 2.0 * f * conv_bound(case, ref, scale, underflow=False)
    extra = 0.0 if moved is None else moved
    return conv_bound(case, f * ref, f * scale) + f * conv_bound(case, ref, scale) + extra


def adjoint_bound(y: np.ndarray, a: np.ndarray, err_a: np.ndarray, x: np.ndarray, b: np.ndarray,
                  err_b: np.ndarray) -> float:
    """adjoint: <y, A> against <B, x> in float64, A = conv(x, w) and B = conv_transpose(y, w) (or the other
    way round for a transposed case) as the target computed them, each element within err_a / err_b of its
    exact value. The exact inner products are equal (the transposed conv is the forward conv's adjoint), so
    |<y, A> - <B, x>| <= sum |y| err_a + sum |x| err_b, plus float64's own rounding of the two dot products
    (gamma(n) at u = 2^-53 times their sums of absolute terms)."""
    y64, a64, x64, b64 = (np.abs(np.asarray(v, dtype=np.float64)) for v in (y, a, x, b))
    n = max(y64.size, x64.size)
    dots = float(np.sum(y64 * a64) + np.sum(x64 * b64))
    return float(np.sum(y64 * err_a) + np.sum(x64 * err_b)) + gamma(n, UNIT_ROUNDOFF["float64"]) * dots
