"""Cut one ONNX model per member out of a model that holds many independent ones (batched export).

A batched export (issue 26) writes N independent subgraphs into one ModelProto, member i with
its own graph inputs and outputs (named, e.g., `b<i>_x` by `member_names`). `split` returns, per
member, the model that holds exactly the nodes its outputs depend on, the initializers those nodes
read and its own inputs and outputs, renamed to the names a single export gives them (`x`, `y`,
...), with the batch's opsets, producer and IR version. Nothing is rewritten: a member's nodes keep their
order, types, attributes and initializer values (tests/test_onnx_batch.py compares them to the
member exported alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def member_names(i: int, names: Sequence[str]) -> list[str]:
    """Member i's names in the batch, for names chosen by the exporter's caller."""
    return [f"b{i}_{n}" for n in names]


def by_prefix(i: int, inputs: Sequence[str], outputs: Sequence[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Member i's (inputs, outputs) as {name in the batch: name alone} for `member_names`."""
    return dict(zip(member_names(i, inputs), inputs)), dict(zip(member_names(i, outputs), outputs))


class SplitError(Exception):
    """The batched model cannot be cut into independent members (then each exports alone)."""


def split(model: Any, members: Sequence[tuple[dict[str, str], dict[str, str]]]) -> list[bytes]:
    """Serialized per-member models; `members[i]` = ({input in the batch: its name alone}, {output
    in the batch: its name alone}), each in the member's own order."""
    import onnx

    graph = model.graph
    if model.functions:
        raise SplitError("the batched model has local functions")
    producer = {out: node for node in graph.node for out in node.output}
    inits = {t.name: t for t in graph.initializer}
    graph_inputs = {v.name: v for v in graph.input}
    graph_outputs = {v.name: v for v in graph.output}
    value_info = {v.name: v for v in graph.value_info}
    owner: dict[int, int] = {}  # id(node) -> member: a node two members share means they are not independent
    models = []
    for i, (ins, outs) in enumerate(members):
        rename = ins | outs
        needed, stack, seen_inits, seen_inputs = set(), list(outs), set(), set()
        while stack:
            name = stack.pop()
            if name in inits:
                seen_inits.add(name)
            elif name in graph_inputs:
                seen_inputs.add(name)
            elif name in producer and id(producer[name]) not in needed:
                node = producer[name]
                needed.add(id(node))
                stack.extend(n for n in node.input if n)
                stack.extend(_subgraph_inputs(node))
        nodes = [n for n in graph.node if id(n) in needed]
        for n in nodes:
            if owner.setdefault(id(n), i) != i:
                raise SplitError(f"node {n.name or n.op_type} is shared by members {owner[id(n)]} and {i}")
        if not seen_inputs <= set(rename):
            raise SplitError(f"member {i} reads inputs of another member: {sorted(seen_inputs - set(rename))}")
        used = {n for node in nodes for n in (*node.input, *node.output)} | seen_inits
        targets = set(rename.values())
        clash = sorted(v for v in used if v in targets and v not in rename)
        if clash:
            raise SplitError(f"member {i}: values {clash} already have the names its inputs or outputs take")

        new_nodes = []
        for n in nodes:
            copy = onnx.NodeProto()
            copy.CopyFrom(n)
            copy.input[:] = [rename.get(v, v) for v in n.input]
            copy.output[:] = [rename.get(v, v) for v in n.output]
            new_nodes.append(copy)

        sub = onnx.helper.make_graph(
            new_nodes, graph.name,
            [_renamed(graph_inputs[n], rename) for n in ins if n in graph_inputs],
            [_renamed(graph_outputs[n], rename) for n in outs],
            initializer=[inits[n] for n in (t.name for t in graph.initializer) if n in seen_inits],
            value_info=[value_info[n] for n in used if n in value_info and n not in rename])
        out = onnx.ModelProto()
        out.CopyFrom(model)
        out.graph.CopyFrom(sub)
        models.append(out.SerializeToString())
    return models


def _renamed(value: Any, rename: dict[str, str]) -> Any:
    import onnx

    v = onnx.ValueInfoProto()
    v.CopyFrom(value)
    v.name = rename[value.name]
    return v


def _subgraph_inputs(node: Any) -> list[str]:
    """Outer-scope names read by a node's subgraphs (If/Loop/Scan bodies)."""
    names: list[str] = []
    for attr in node.attribute:
        for g in [attr.g] if attr.HasField("g") else list(attr.graphs):
            local = {v.name for v in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
            names.extend(v for n in g.node for v in n.input if v and v not in local)
            for n in g.node:
                names.extend(_subgraph_inputs(n))
    return names
