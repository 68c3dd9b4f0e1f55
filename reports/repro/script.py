"""Standalone reproducer scripts: NumPy plus one framework, no convdiff import.

A script recreates the inputs from the seed exactly as harness/numerics/inputs.py does, calls
the framework exactly as the adapter did (from the record's translation), computes a
float64 reference inline (a direct loop over kernel taps, independent of the oracle's
einsum-over-windows), applies the same per-element bound as harness/numerics/bound.py, and
prints the max error and the verdict. It is meant to be pasted into an upstream bug.

Per-backend part: one template per framework, registered in reports/repro/registry.py
(which says how to add one) and loaded by reports/repro/templates.py: torch and the
fault doubles in reports/repro/torch.py, TensorFlow, Keras and Paddle in
reports/repro/frameworks.py, the TVM backends in reports/repro/tvm.py and reports/repro/tvm_relax.py,
the deployed paths in reports/repro/inductor.py, reports/repro/tf_deployed.py and
reports/repro/paddle_inference.py.

An epilogue case's script also draws the epilogue's constants after x, w, b, applies the epilogue
to the reference and carries the bound through it (reports/repro/epilogue.py); each template feeds
the constants and residuals to the framework as its adapter did.
"""

from __future__ import annotations

from harness.execution.records import Record
from harness.model.build import make_case
from harness.model.case import Case
from harness.numerics.bound import _tiny
from harness.numerics.inputs import SIGNIFICAND_BITS, integer_amplitude
from reports.repro import templates  # noqa: F401 - registers every framework's templates
from reports.repro.epilogue import REFERENCE_SOURCE, draw_source
from reports.repro.plugin import adapter_template, plugin_template
from reports.repro.registry import BackendTemplate, ReproUnavailable
from reports.repro.registry import template_for as registered_template
from reports.repro.verdict import BOUND_SOURCE, JUDGE_SOURCE, VERDICT_SOURCE

__all__ = ["ReproUnavailable", "find_record", "script_for"]


def template_for(rec: Record) -> BackendTemplate:
    """convdiff's template for the exact backend name, else the plugin's own, else the generic plugin script."""
    return registered_template(rec, lambda name: plugin_template(name) or adapter_template(name))


def case_of(rec: Record) -> Case:
    """The canonical case back from a record's params (tags dropped: free text, irrelevant to the numbers).
    Params that no longer make a case (a generator that labelled an invalid geometry valid, a record from an older
    schema) leave that result without a script, not the report without its other results."""
    fields = {k: v for k, v in rec.params.items() if k != "tags"}
    try:
        return make_case(file=rec.file, id="repro", **fields)
    except (ValueError, TypeError) as exc:
        raise ReproUnavailable(f"the result's parameters do not make a case: {exc}") from exc


def script_for(rec: Record) -> str:
    """The whole script for one result."""
    if rec.status == "unsupported":
        raise ReproUnavailable(f"{rec.backend} declared this case unsupported, so nothing ran: {rec.message}")
    case = case_of(rec)
    if case.geometry is None:
        raise ReproUnavailable("an `expect: invalid` case has no reference; the repro is the framework call alone")
    if case.quantized:  # exact integers, errors in units of y, per-backend parts (reports/repro/quant.py)
        from reports.repro.quant import quant_script

        return quant_script(rec, case)
    if case.epilogue:
        # forward only: its constants after x, w, b; the reference and bound carried through it
        backend_code = template_for(rec)(rec, case)
        return "\n".join([_header(rec, case), draw_source(case).strip("\n"), "", backend_code.strip("\n"), "",
                          _FOOTER + BOUND_SOURCE + REFERENCE_SOURCE + JUDGE_SOURCE])
    if rec.output != "out":  # a gradient: dy, the gradient calls, the reference gradient (reports/repro/grad.py)
        from reports.repro.grad import gradient_part

        return "\n".join([_header(rec, case), gradient_part(rec, case).strip("\n")]) + "\n"
    backend_code = template_for(rec)(rec, case)
    return "\n".join([_header(rec, case), backend_code.strip("\n"), "", _FOOTER + VERDICT_SOURCE])


def _header(rec: Record, case: Case) -> str:
    geo = case.geometry
    assert geo is not None
    ratio = "n/a" if rec.bound_ratio is None else f"{rec.bound_ratio:.4g}"
    amp = integer_amplitude(case) if case.data == "integers" else 0
    return f'''#!/usr/bin/env python3
"""Reproduce convdiff result {rec.file}::{rec.case_id} on {rec.backend} {rec.backend_version} ({rec.device}).

convdiff recorded: {rec.status}, max |err| {rec.max_abs_err}, error/bound {ratio}{f", diagnosis {rec.diagnosis}" if rec.diagnosis else ""}.
Needs only NumPy and the framework. Exit status 1 when the output is beyond the bound.
"""
import sys

import numpy as np

# The case ({case.op}, PyTorch semantics): padding resolved to explicit (before, after) pairs.
OP, SEED, DTYPE, DATA, LAYOUT, DEVICE = {case.op!r}, {case.seed}, {case.dtype!r}, {case.data!r}, {case.layout!r}, {rec.device!r}
BATCH, C_IN, C_OUT, GROUPS, BIAS = {case.batch}, {case.in_channels}, {case.out_channels}, {case.groups}, {case.bias}
INPUT, KERNEL, STRIDE, DILATION = {case.input_size}, {case.kernel_size}, {case.stride}, {case.dilation}
PADS, EXTEND = {geo.pads}, {geo.extend}  # EXTEND: transposed output tail (output_padding / SAME)
TRANSPOSE = {case.transpose}
W_SHAPE = {case.weight_shape}
AMP = {amp}  # integer data drawn from [-AMP, AMP]
K = {case.accumulation_length}  # products summed per output element
SIG_BITS, TINY = {SIGNIFICAND_BITS[case.dtype]}, {_tiny(case.dtype)!r}
TF32 = False  # CUDA only: set True when TF32 convolutions are allowed


def draw(rng, shape):
    if DATA == "integers":
        return rng.integers(-AMP, AMP + 1, size=shape).astype(np.float64)
    if DATA == "uniform":
        return rng.uniform(-1.0, 1.0, size=shape)
    return rng.standard_normal(shape)


def round_to_dtype(a):
    """float64 values rounded to DTYPE (bfloat16: via float32, round-to-nearest-even, as ml_dtypes does)."""
    if DTYPE == "bfloat16":
        u = a.astype(np.float32).view(np.uint32)
        u = ((u + (((u >> 16) & 1) + 0x7FFF)) & 0xFFFF0000).astype(np.uint32)
        return u.view(np.float32).astype(np.float64)
    return a.astype(DTYPE).astype(np.float64)


rng = np.random.default_rng(SEED)
x = round_to_dtype(draw(rng, (BATCH, C_IN, *INPUT)))  # channels-first, as convdiff draws it
w = round_to_dtype(draw(rng, W_SHAPE))
b = round_to_dtype(draw(rng, (C_OUT,))) if BIAS else None
x_case = (np.moveaxis(x, 1, -1) if LAYOUT == "channels_last" else x).copy()  # a fresh C-order array, as the adapter gets:
# its size-1 axes have C-order strides too (torch reads a one-channel tensor's layout from them)
'''


_FOOTER = '''
def conv(x, w):
    """Float64 cross-correlation, x (N, C, *L), w (O, C/g, *k): one einsum per kernel tap."""
    x = np.pad(x, [(0, 0), (0, 0), *PADS])
    n, c, *size = x.shape
    o, cg, *k = w.shape
    out = [(m - d * (kk - 1) - 1) // s + 1 for m, kk, s, d in zip(size, k, STRIDE, DILATION)]
    xg, wg = x.reshape(n, GROUPS, cg, *size), w.reshape(GROUPS, o // GROUPS, cg, *k)
    y = np.zeros((n, GROUPS, o // GROUPS, *out))
    for tap in np.ndindex(*k):
        win = tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, DILATION, out, STRIDE))
        y += np.einsum("ngc...,goc->ngo...", xg[(slice(None),) * 3 + win], wg[(Ellipsis, *tap)])
    return y.reshape(n, o, *out)


def conv_transpose(x, w):
    """Float64 transposed convolution, w (C_in, C_out/g, *k): scatter each tap, extend the tail, crop PADS."""
    n, cin, *size = x.shape
    _, og, *k = w.shape
    full = [(m - 1) * s + d * (kk - 1) + 1 + e for m, s, d, kk, e in zip(size, STRIDE, DILATION, k, EXTEND)]
    xg, wg = x.reshape(n, GROUPS, cin // GROUPS, *size), w.reshape(GROUPS, cin // GROUPS, og, *k)
    y = np.zeros((n, GROUPS, og, *full))
    for tap in np.ndindex(*k):
        dst = tuple(slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, DILATION, size, STRIDE))
        y[(slice(None),) * 3 + dst] += np.einsum("ngc...,gco->ngo...", xg, wg[(Ellipsis, *tap)])
    crop = tuple(slice(pb, f - pa) for (pb, pa), f in zip(PADS, full))
    return y.reshape(n, GROUPS * og, *full)[(slice(None), slice(None), *crop)]


def reference(x, w, b):
    y = (conv_transpose if TRANSPOSE else conv)(x, w)
    return y if b is None else y + b.reshape(1, -1, *(1,) * len(KERNEL))


ref, scale = reference(x, w, b), reference(np.abs(x), np.abs(w), None if b is None else np.abs(b))
if LAYOUT == "channels_last":
    ref, scale = np.moveaxis(ref, 1, -1), np.moveaxis(scale, 1, -1)

K_ACC, WHAT, ARGS = K, "output", (x_case, w, b)
'''


def _matches(rec_file: str, rec_id: str, wanted: str) -> bool:
    """CASE_ID as `file::id` or the bare id."""
    file, sep, cid = wanted.rpartition("::")
    return rec_id == cid and (not sep or rec_file == file or rec_file == file.rsplit("/", 1)[-1])


def find_record(case_id: str, backend: str, device: str, case_paths: list[str],
                results: str | None = None, output: str = "out") -> Record:
    """The result to reproduce: from a results.jsonl when given, else by running the case once now.
    `output`: out (forward), or a gradient (the case then runs its backward pass)."""
    if results:
        from pathlib import Path

        from harness.execution.records import read_records

        for rec in read_records([Path(results)]):
            if (rec.backend == backend and rec.device == device and rec.output == output
                    and _matches(rec.file, rec.case_id, case_id)):
                return rec
        raise ReproUnavailable(f"no {output} result for {case_id} on {backend}-{device} in {results}")
    from pathlib import Path

    from harness.execution.runner import run_cases
    from harness.judge.verdict import Verdicts
    from harness.model.loader import load_cases

    cases = [c for c in load_cases(case_paths) if _matches(Path(c.file).name, c.id, case_id)]
    if not cases:
        raise ReproUnavailable(f"no case '{case_id}' in {', '.join(case_paths)}")
    if len(cases) > 1:
        raise ReproUnavailable(f"'{case_id}' is ambiguous: name it as FILE::ID ({', '.join(Path(c.file).name for c in cases)})")
    if output != "out":
        import dataclasses

        cases = [dataclasses.replace(c, gradients=True) for c in cases]
    found: list[Record] = []
    info = run_cases(cases, [(backend, device)], found.append, Verdicts())
    if not found:
        raise ReproUnavailable(f"{backend}-{device} did not run: {info.skipped.get(f'{backend}-{device}', 'unavailable')}")
    chosen = [r for r in found if r.output == output]
    if not chosen:
        raise ReproUnavailable(f"{case_id} has no {output} (grad_bias needs a bias)")
    return chosen[0]

