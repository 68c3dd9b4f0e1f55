"""tvm-torch-import's batched import (issue 26): one torch.export and one `from_exported_program` for
many cases' modules, cut into one Relax function per case.

Why: `from_exported_program` first runs `ExportedProgram.run_decompositions()`, whose fixed cost (torch
collects and materializes every composite-implicit op each call) is ~0.3 s, most of an importer call
for a small conv (68 smoke cases: 19.8 s one by one against ~2 s as three batches, measured).

How: the members' modules sit side by side in one `Batch` module whose forward takes every member's
inputs in turn and returns one output per member. It is exported and decomposed once, exactly as the
importer's entry point does for a single module (`run_decompositions()` with torch's default table),
then translated by `from_exported_program(..., run_ep_decomposition=False)`. The translator converts
the graph node by node, each node from its own inputs, and the members share no node, input or
parameter; so member i's part of the imported function is what importing member i alone gives.
`split_members` cuts it out: member i's inputs as parameters, the bindings its output depends on, its
output returned. tests/test_tvm_batch.py checks that a cut member is structurally equal (tvm_ffi
structural_equal, constants compared by value) to the member imported alone, and that the records are
the same batched and unbatched.

A member the translator refuses (e.g. a 3-D transposed conv) is found from the failing node: its output
is replaced by its own first input, so its nodes are dead and dropped, and the decomposed program is
translated again (translation is cheap; the decomposition is not redone). Such a member, and every
member of a batch that could not be exported, decomposed or cut, is left to import alone in its own
run(), which records its own failure exactly as without batching.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import Any

from backends.torch import epilogue as torch_epilogue
from backends.torch.module import conv_module, side_by_side, to_tensor
from harness.model.case import Case
from harness.numerics.inputs import Inputs

Member = tuple[Case, Inputs, tuple]  # a case, its inputs, module_plan's (cls, args, pre_pad, crop)


def import_batch(members: Sequence[Member]) -> list[Any | None]:
    """Per member, its IRModule (one `main`, as `from_exported_program(..., unwrap_unit_return_tuple=True)`
    gives for it alone), or None where it must import alone."""
    import torch
    import tvm
    from tvm.relax.frontend.torch import from_exported_program

    models, flat, arity = [], [], []
    for case, inputs, plan in members:
        models.append(conv_module(case, inputs, *plan, epilogue=bool(case.epilogue)))
        args = [to_tensor(inputs.x), *map(to_tensor, torch_epilogue.residuals(case, inputs.epilogue).values())]
        flat.extend(args)
        arity.append(len(args))

    try:
        with torch.no_grad():
            program = torch.export.export(side_by_side(models, arity), tuple(flat)).run_decompositions()
    except Exception:  # noqa: BLE001 - the exporter refused a member: each exports alone in run()
        return [None] * len(members)
    dropped: set[int] = set()
    while len(dropped) < len(members):
        try:
            mod = from_exported_program(program, run_ep_decomposition=False)
        except Exception as exc:  # noqa: BLE001 - a member the translator refuses: drop it, translate again
            culprit = _failing_member(exc, program)
            if culprit is None or culprit in dropped:
                return [None] * len(members)
            dropped.add(culprit)
            _cut(program, culprit, arity)
            continue
        try:
            functions = split_members(mod["main"], arity)
        except SplitError:
            return [None] * len(members)
        return [None if i in dropped else tvm.IRModule({"main": f}) for i, f in enumerate(functions)]
    return [None] * len(members)


def _outputs(program: Any) -> tuple[Any, list[Any]]:
    node = next(n for n in program.graph.nodes if n.op == "output")
    return node, list(node.args[0])


def _failing_member(exc: BaseException, program: Any) -> int | None:
    """The member whose node the translator was converting when it raised (None: not found)."""
    graph = program.graph
    node = next((frame.f_locals["node"] for frame, _ in traceback.walk_tb(exc.__traceback__)
                 if getattr(frame.f_locals.get("node"), "graph", None) is graph), None)
    if node is None:
        return None
    _, outs = _outputs(program)
    seen, todo = set(), [node]
    while todo:  # forward from the failing node to the outputs it feeds
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(n.users)
    hit = [i for i, out in enumerate(outs) if out in seen]
    return hit[0] if len(hit) == 1 else None


def _cut(program: Any, member: int, arity: list[int]) -> None:
    """Return the member's first input in place of its output and drop its now dead nodes."""
    out_node, outs = _outputs(program)
    user_inputs = [n for n in program.graph.nodes if n.op == "placeholder"
                   and n.name in program.graph_signature.user_inputs]
    outs[member] = user_inputs[sum(arity[:member])]
    out_node.args = (tuple(outs),)
    program.graph.eliminate_dead_code()
    program.graph_module.recompile()


class SplitError(Exception):
    """The imported function is not one dataflow block returning one tuple field per member."""


def split_members(func: Any, arity: Sequence[int]) -> list[Any]:
    """Cut `func(inputs of member 0, inputs of member 1, ...) -> (out0, out1, ...)` into one function per
    member: its inputs, the bindings its output depends on (in their order), its output returned."""
    from tvm import relax

    body = func.body
    if len(body.blocks) != 1 or not isinstance(body.blocks[0], relax.DataflowBlock):
        raise SplitError("not one dataflow block")
    bindings = list(body.blocks[0].bindings)
    if not all(isinstance(b, relax.VarBinding) for b in bindings):
        raise SplitError("a binding is not a plain variable binding")
    result = {b.var: b.value for b in bindings}.get(body.body)
    if not isinstance(result, relax.Tuple) or len(result.fields) != len(arity) or len(func.params) != sum(arity):
        raise SplitError("the function does not return one field per member")
    functions, at = [], 0
    for field, n in zip(result.fields, arity):
        params = list(func.params[at:at + n])
        at += n
        needed = set(relax.analysis.free_vars(field))
        kept = []
        for binding in reversed(bindings):
            if binding.var in needed:
                kept.append(binding)
                needed.update(relax.analysis.free_vars(binding.value))
        if not needed - {b.var for b in kept} <= set(params):
            raise SplitError("a member depends on another member's inputs")
        out = relax.Var("gv", field.ty)
        block = relax.DataflowBlock([*reversed(kept), relax.VarBinding(out, field)])
        function = relax.Function(params, relax.SeqExpr([block], out), ret_ty=field.ty, attrs=func.attrs)
        functions.append(relax.BlockBuilder().normalize(function))
    return functions
