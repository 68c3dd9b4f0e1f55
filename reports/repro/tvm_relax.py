"""Reproducer templates for the direct Relax backends, `tvm` and `tvm-bound` (see reports/repro/script.py for
the script around them, reports/repro/tvm.py for the pieces every TVM script shares).

Both build the `tvm` adapter's Relax function (backends/tvm/plan.direct_plan: one relax.op.nn call,
the bias add; then the epilogue as backends/tvm/epilogue.py emits it, its constants and residuals
function parameters after x, w, b). `tvm` passes every parameter at run time; `tvm-bound` binds the
weight, the bias and the epilogue's constants as relax constants with relax.transform.BindParams (as
an importer does with a model's initializers), so that the default pipeline's FoldConstant and
FuseOps see them, and passes x and the residuals. The recorded translation must be the one the
adapter writes now (else ReproUnavailable: it changed since the record was made).
"""

from __future__ import annotations

import textwrap

from backends.tvm import epilogue as tvm_epilogue
from backends.tvm.bound import TvmBoundBackend
from backends.tvm.direct import TvmBackend
from backends.tvm.plan import direct_plan
from harness.execution.records import Record
from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, LEAKY_SLOPE, Case
from reports.repro.registry import register
from reports.repro.tvm import RUNNER, check_lines, notes_source, supported, tvm_imports

BIND_COMMENT = "  # relax constants: the default pipeline's FoldConstant and FuseOps see them"


@register("tvm")
def tvm_template(rec: Record, case: Case) -> str:
    """One relax.op.nn call in a BlockBuilder function, as direct_plan says (layouts, pads, bias add, epilogue)."""
    supported(TvmBackend(), rec, case)
    params = _params(case)
    lines, notes = _lines(case)
    check_lines(rec, notes, lines, ", ".join(params))
    return _module(rec, case, notes) + f'''


def run_framework(x, w, b):
    """Compile and run it on {rec.device}; w arrives (O, I/g, *k) or, transposed, (I, O/g, *k)."""
    {_relayout(case)}
    return compile_and_run(build_module(), {", ".join(_arguments(case, params))})
'''


@register("tvm-bound")
def tvm_bound_template(rec: Record, case: Case) -> str:
    """The `tvm` function with w, b and the epilogue's constants bound (BindParams), x and residuals passed."""
    supported(TvmBoundBackend(), rec, case)
    params = _params(case)
    runtime = [p for p in params if p == "x" or p in _residuals(case)]
    bound = [p for p in params if p not in runtime]
    lines, notes = _lines(case)
    names = ", ".join(f"{k!r}: {k}" for k in bound)
    check_lines(rec, notes, [*lines, f"mod = relax.transform.BindParams('main', {{{names}}})(mod)" + BIND_COMMENT],
                ", ".join(runtime))
    args = dict(zip(params, _arguments(case, params)))
    consts = ", ".join(f"{k!r}: {args[k]}" for k in bound)
    return _module(rec, case, notes) + f'''


def run_framework(x, w, b):
    """Bind the constants, compile and run on {rec.device}; w arrives (O, I/g, *k) or, transposed, (I, O/g, *k)."""
    {_relayout(case)}
    consts = {{{consts}}}
    mod = relax.transform.BindParams("main", {{k: tvm.runtime.tensor(case_dtype(v)) for k, v in consts.items()}})(build_module())
    return compile_and_run(mod, {", ".join(args[k] for k in runtime)})
'''


def _lines(case: Case) -> tuple[list[str], list[str]]:
    """The translation lines of the function (conv, bias, epilogue) and the exact-identity notes."""
    _, _, _, _, lines, notes = direct_plan(case)
    return [*lines, *tvm_epilogue.lines(case)], notes


def _params(case: Case) -> list[str]:
    """`main`'s parameters in order: x, w, (b), then the epilogue's."""
    return ["x", "w", *(["b"] if case.bias else []), *(p.name for p in tvm_epilogue.parameters(case))]


def _residuals(case: Case) -> list[str]:
    return [p.name for p in tvm_epilogue.parameters(case) if p.residual]


def _arguments(case: Case, params: list[str]) -> list[str]:
    """The script's value for each parameter: x, w, b, then the NAMED arrays (case dtype in compile_and_run)."""
    return [p if p in ("x", "w", "b") else f"NAMED[{p!r}]" for p in params]


def _relayout(case: Case) -> str:
    relayout = [ln for ln in direct_plan(case)[4] if ln.startswith("w = np.transpose(")]
    return relayout[0] if relayout else "# w already in the declared kernel layout"


def _module(rec: Record, case: Case, notes: list[str]) -> str:
    """The imports, the runner and build_module(): the Relax function the `tvm` adapter builds."""
    fn_name, kw, w_shape, _, lines, _ = direct_plan(case)
    ops = [f"y = bb.emit({ln.removeprefix('y = ')})" for ln in lines if ln.startswith("y = relax.op.")]
    decl = [f'{p} = relax.Var("{p}", relax.TensorType(shape={shape}, dtype=DTYPE))' for p, shape in (
        ("x", case.input_shape), ("w", w_shape), *((("b", (case.out_channels,)),) if case.bias else ()),
        *((q.name, q.shape) for q in tvm_epilogue.parameters(case)))]
    body = textwrap.indent("\n".join([*ops, *_emit_epilogue(case)]), " " * 12)
    return tvm_imports() + RUNNER + f'''

{notes_source(notes)}def build_module():
    """The Relax function convdiff's {rec.backend} adapter builds: relax.op.nn.{fn_name}, kernel in {kw["kernel_layout"]}{
        ", then the epilogue" if case.epilogue else ""}."""
{textwrap.indent(chr(10).join(decl), " " * 4)}
    bb = relax.BlockBuilder()
    with bb.function("main", [{", ".join(_params(case))}]):
        with bb.dataflow():
{body}
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()'''


def _emit_epilogue(case: Case) -> list[str]:
    """The epilogue as backends/tvm/epilogue.py emit() emits it, one bb.emit per op (constants in DTYPE)."""
    view = tvm_epilogue.channel_view(case)
    axis = case.rank + 1 if case.channels_last else 1
    acts = {"relu": "relax.op.nn.relu(y)", "relu6": "relax.op.nn.relu6(y)",
            "leaky_relu": f"relax.op.nn.leakyrelu(y, alpha={LEAKY_SLOPE})", "sigmoid": "relax.op.sigmoid(y)",
            "tanh": "relax.op.tanh(y)", "gelu": "relax.op.nn.gelu(y)", "silu": "relax.op.nn.silu(y)",
            "hardswish": "relax.op.divide(relax.op.multiply(y, relax.op.clip(relax.op.add(y, relax.const(3.0, DTYPE)), "
                         "0, 6)), relax.const(6.0, DTYPE))",
            "clamp": f"relax.op.clip(y, {CLAMP_RANGE[0]}, {CLAMP_RANGE[1]})"}
    out: list[str] = []
    for i, name in enumerate(case.epilogue):
        if name in acts:
            out.append(f"y = bb.emit({acts[name]})")
        elif name == "residual":
            out.append(f"y = bb.emit(relax.op.add(y, residual{i}))")
        elif name == "batch_norm":
            out += [f"bn = bb.emit(relax.op.nn.batch_norm(y, bn{i}_gamma, bn{i}_beta, bn{i}_mean, bn{i}_var, axis={axis}, "
                    f"epsilon={BATCH_NORM_EPS}, training=False))", "y = bb.emit(relax.TupleGetItem(bn, 0))"]
        elif name in ("mul_scalar", "add_scalar"):
            out.append(f"y = bb.emit(relax.op.{tvm_epilogue.BINARY[name]}(y, {name}{i}))")
        else:
            c = f"{name}{i}" if view is None else f"relax.op.reshape({name}{i}, {view})"
            out.append(f"y = bb.emit(relax.op.{tvm_epilogue.BINARY[name]}(y, {c}))")
    return out
