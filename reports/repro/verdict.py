"""The end of every reproducer: harness/numerics/bound.py's bound, the framework call, the verdict.

Plain source (not a format string). The script defines before it: ref and scale (float64, in the
framework's layout), K_ACC (the accumulation length), WHAT (what is compared: "output" or a
gradient's name), ARGS (run_framework's arguments), and the header's constants.
VERDICT_SOURCE is BOUND_SOURCE (the conv's bound, at ref) then JUDGE_SOURCE (the call and the verdict); an
epilogue case puts reports/repro/epilogue.py's REFERENCE_SOURCE between them.
"""

BOUND_SOURCE = '''
# The bound (convdiff harness/numerics/bound.py): gamma(K+2) * (|x| (*) |w| + |b|), in the accumulation precision,
# K_ACC the accumulation length of what is compared.
n_acc = K_ACC + 2
half = DTYPE in ("float16", "bfloat16")
u_acc = 2.0**-24 if half else 2.0**-SIG_BITS
if DATA == "integers" and scale.max(initial=0.0) <= 2.0 ** min(SIG_BITS, 24):
    bound = np.zeros_like(scale)  # every partial sum is an exact integer
else:
    bound = n_acc * u_acc / (1 - n_acc * u_acc) * scale
    if half:
        bound += 2.0**-SIG_BITS * (scale + np.abs(ref))
    if TF32 and DTYPE == "float32":
        bound += 2.0 * 2.0**-11 * scale
    bound += n_acc * TINY
'''

JUDGE_SOURCE = '''
try:
    out, out_dtype = run_framework(*ARGS)
except Exception as exc:  # the framework refused a valid case
    print(f"framework raised: {type(exc).__name__}: {exc}".splitlines()[0])
    print("verdict: " + ("crash" if type(exc).__name__ == "Crashed" else "rejected"))  # a tool killed by a signal
    sys.exit(1)
if out.shape != ref.shape:
    print(f"{WHAT} shape {out.shape}, expected {ref.shape}")
    verdict = "shape_mismatch"
elif out_dtype != DTYPE:
    print(f"{WHAT} dtype {out_dtype}, expected {DTYPE}")
    verdict = "mismatch"
else:
    finite = np.isfinite(out)
    err = np.where(finite, np.abs(out - ref), 0.0)
    # where exact arithmetic makes the bound 0, errors count in units of one rounding (as convdiff does)
    unit = np.maximum(bound, 2.0**-SIG_BITS * scale + np.finfo(np.float64).tiny)
    with np.errstate(over="ignore"):
        ratio = np.where(finite, err / unit, np.inf)
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.size else ()
    print(f"max |err| = {err.max(initial=0.0):.6g}; error/bound = {ratio.max(initial=0.0):.6g} at index {tuple(map(int, worst))}")
    print(f"{int((~finite).sum())} non-finite, {int((ratio > 1).sum())}/{ratio.size} elements beyond the bound")
    verdict = "pass" if (finite.all() and not (ratio > 1).any()) else "mismatch"
print(f"verdict: {verdict}")
sys.exit(0 if verdict == "pass" else 1)
'''

VERDICT_SOURCE = BOUND_SOURCE + JUDGE_SOURCE
