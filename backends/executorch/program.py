"""An ExecuTorch program for a case: the nn.Module a user writes, torch.export, lowering, `.pte` bytes.

The module is backends/torch/module.py's (the torch backend's identities: F.pad before an asymmetric conv, a
slice after an asymmetric transpose, movedim for channels_last) with the case's epilogue in its forward
(backends/torch/epilogue.py: per-channel constants are buffers, each residual an input after x). It is captured
by `torch.export.export(model, (x, *residuals))` and lowered the way ExecuTorch's documentation shows:

    edge = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])   # executorch
    edge = to_edge_transform_and_lower(exported)                                        # executorch-portable
    pte = edge.to_executorch().buffer

What the partitioner took is read from the lowered graph (`delegation`): each `executorch_call_delegate`
node's lowered module (its backend id and the edge ops of its original program), and every edge op left
outside a delegate, which the runtime runs on its own CPU kernels.

Framework imports happen inside the functions: only a worker that runs an ExecuTorch path loads them.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from backends.base import Rejected, first_line
from backends.torch import epilogue as torch_epilogue
from backends.torch.module import conv_module, epilogue_lines, module_plan, side_by_side, to_tensor
from harness.model.case import Case
from harness.numerics.inputs import Inputs

DELEGATE = "XnnpackPartitioner"
HIDDEN = ("getitem", "executorch_call_delegate")  # plumbing nodes, not ops


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence the Python warnings and prints lowering emits (the C++ runtime's log goes to stderr regardless)."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def float_module(case: Case, inputs: Inputs) -> tuple[Any, tuple, list[str], list[str]]:
    """(module with the epilogue, its example inputs as tensors, the forward as code lines, notes)."""
    cls, args, pre_pad, crop, body, notes = module_plan(case)
    try:
        model = conv_module(case, inputs, cls, args, pre_pad, crop, epilogue=True)
    except (ValueError, RuntimeError) as exc:  # nn.ConvNd's own check refuses an invalid case
        raise Rejected(first_line(exc)) from None
    example = (to_tensor(inputs.x), *map(to_tensor, torch_epilogue.residuals(case, inputs.epilogue).values()))
    return model, example, module_lines(case, inputs, cls, args, body), notes


def described(case: Case, inputs: Inputs) -> tuple[list[str], list[str]]:
    """(the module's code lines, notes) without building it (pure)."""
    cls, args, _, _, body, notes = module_plan(case)
    return module_lines(case, inputs, cls, args, body), notes


def module_lines(case: Case, inputs: Inputs, cls: str, args: dict[str, Any], body: list[str]) -> list[str]:
    """The module and its forward as a user writes them (the epilogue before channels_last's movedim back)."""
    names = ["x", *torch_epilogue.residuals(case, inputs.epilogue)]
    if case.epilogue and inputs.epilogue:
        tail = body[-1:] if case.channels_last else []
        body = [*body[:len(body) - len(tail)], *epilogue_lines(case, inputs.epilogue), *tail]
    buffers = [f"{k}: {tuple(v.shape)}" for k, v in torch_epilogue.buffers(case, inputs.epilogue).items()]
    return [f"m = torch.nn.{cls}(" + ", ".join(f"{k}={v!r}" for k, v in args.items())
            + f", dtype=torch.{case.dtype})  # weight/bias = case inputs",
            *([f"buffers (case constants): {', '.join(buffers)}"] if buffers else []),
            f"forward({', '.join(names)}): " + "; ".join(body)]


def lower(exported: Any, delegate: bool) -> Any:
    """to_edge_transform_and_lower, with the XNNPACK partitioner or without a partitioner."""
    from executorch.exir import to_edge_transform_and_lower

    if not delegate:
        return to_edge_transform_and_lower(exported)
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])


def op_name(target: Any) -> str:
    """'aten.convolution' for an edge or aten op overload, 'getitem' for a Python function."""
    name = target.name() if hasattr(target, "name") and callable(target.name) else getattr(target, "__name__", str(target))
    return str(name).replace("::", ".")


def _ancestors(graph: Any, outputs: Sequence[int] | None) -> set[Any] | None:
    """The nodes the chosen outputs depend on (None: every node)."""
    if outputs is None:
        return None
    out = next(n for n in graph.nodes if n.op == "output")
    stack = [out.args[0][i] for i in outputs]
    seen: set[Any] = set()
    while stack:
        node = stack.pop()
        if not hasattr(node, "all_input_nodes") or node in seen:
            continue
        seen.add(node)
        stack.extend(node.all_input_nodes)
    return seen


def delegation(edge: Any, outputs: Sequence[int] | None = None) -> str:
    """'XnnpackBackend: aten.convolution, aten.relu; runtime kernels: aten.sigmoid' for the lowered program
    (restricted to what `outputs` depend on, for one member of a batch)."""
    program = edge.exported_program()
    gm = program.graph_module
    keep = _ancestors(gm.graph, outputs)
    delegated: dict[str, list[str]] = {}
    kernels: list[str] = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or (keep is not None and node not in keep):
            continue
        name = op_name(node.target)
        if name.endswith("executorch_call_delegate"):
            lowered = getattr(gm, node.args[0].target)
            sub = lowered.original_module.graph_module.graph
            ops = [op_name(n.target) for n in sub.nodes if n.op == "call_function"]
            delegated.setdefault(lowered.backend_id, []).extend(o for o in ops if not o.endswith(HIDDEN))
        elif not name.endswith(HIDDEN):
            kernels.append(name)
    parts = [f"{backend}: {', '.join(dict.fromkeys(ops))}" for backend, ops in delegated.items()]
    parts.append(f"runtime kernels: {', '.join(dict.fromkeys(kernels)) or 'none'}")
    return "; ".join(parts)


def export_and_lower(model: Any, example: tuple, delegate: bool, members: int = 0) -> tuple[bytes, list[str]]:
    """(the .pte bytes, what was delegated) of an eval-mode module: one summary, or with `members` > 0 one per
    output (a batch's members), read before to_executorch (which adds its memory-planning nodes)."""
    import torch

    with quiet(), torch.no_grad():
        exported = torch.export.export(model, example)
        edge = lower(exported, delegate)
        lowered = [delegation(edge, [i]) for i in range(members)] if members else [delegation(edge)]
        return bytes(edge.to_executorch().buffer), lowered


def build(case: Case, inputs: Inputs, delegate: bool) -> dict[str, bytes]:
    """The cache entry of one case built alone: the program and what was delegated."""
    model, example, _, _ = float_module(case, inputs)
    pte, lowered = export_and_lower(model, example, delegate)
    return {"program.pte": pte, "delegation.txt": lowered[0].encode()}


def build_batch(members: Sequence[tuple[Case, Inputs]], delegate: bool) -> tuple[bytes, list[str]]:
    """One program holding the members side by side (member i's inputs in turn, one output each; no op joins
    two members): its .pte bytes and each member's delegation."""
    models, example, arity = [], [], []
    for case, inputs in members:
        model, ex, _, _ = float_module(case, inputs)
        models.append(model)
        example.extend(ex)
        arity.append(len(ex))
    return export_and_lower(side_by_side(models, arity).eval(), tuple(example), delegate, len(members))


def program_lines(case: Case, inputs: Inputs, delegate: bool, delegated: str) -> list[str]:
    """Export, lowering and the runtime call as a user writes them, after the module's lines."""
    names = ", ".join(["x", *torch_epilogue.residuals(case, inputs.epilogue)])
    part = ", partitioner=[XnnpackPartitioner()]" if delegate else ""
    return [f"ep = torch.export.export(model.eval(), ({names},))",
            f"pte = to_edge_transform_and_lower(ep{part}).to_executorch().buffer",
            "program = Runtime.get().load_program(pte); method = program.load_method('forward')"
            "  # pte and program kept alive while method runs",
            f"y = method.execute([{names}])[0]",
            f"lowered: {delegated}"]


def quant_lines(delegated: str) -> list[str]:
    """The same for a quantized case's converted module `gm` (quant.py)."""
    return ["ep = torch.export.export(gm, (x,))",
            "pte = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer",
            "program = Runtime.get().load_program(pte); method = program.load_method('forward')",
            "y = method.execute([x])[0]; y_int = rint(y / y_scale) + y_zp  # y: the dequantized output",
            f"lowered: {delegated}"]
