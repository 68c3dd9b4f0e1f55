"""Reproducer templates for executorch and executorch-portable (see reports/repro/script.py for the script around it).

What backends/executorch/ does, written out for ExecuTorch alone: the module of backends/torch/module.py (the torch
backend's identities; the epilogue in forward, its per-channel constants buffers, each residual an input after x),
`torch.export.export`, `to_edge_transform_and_lower` with `XnnpackPartitioner()` (executorch) or without a
partitioner (executorch-portable), `.to_executorch()`, and the Python runtime, holding the program bytes and the
`Program` for as long as the method runs (the `Method` keeps neither alive). The script prints what the partitioner
delegated, as the record's `lowered:` line says it, and the runtime's own log where it refuses to execute.

A record's translation must be the lines the adapter writes now (its `lowered:` line aside, which only lowering
computes); a case lowered as a member of a batched program is reproduced alone, the program the adapter builds for
it when it runs without prepare().
"""

from __future__ import annotations

from backends.executorch import program, quant
from backends.torch.module import module_plan
from harness.execution.records import Record
from harness.model.case import Case
from harness.numerics.inputs import make_inputs
from reports.repro.pinned_observer import PINNED_OBSERVER
from reports.repro.registry import register, stale
from reports.repro.torch_module import model_class_source, module_inputs

LOWERED_OPS = '''
def lowered_ops(edge):
    """What the partitioner delegated (each delegate's backend and ops) and what stays on the runtime's kernels."""
    gm = edge.exported_program().graph_module
    out = []
    for node in gm.graph.nodes:
        if node.op != "call_function" or "getitem" in str(node.target):
            continue
        if "executorch_call_delegate" in str(node.target):
            sub = getattr(gm, node.args[0].target)
            ops = [n.target.name() for n in sub.original_module.graph_module.graph.nodes
                   if n.op == "call_function" and hasattr(n.target, "name")]
            out.append(f"{sub.backend_id}: {', '.join(ops)}")
        else:
            out.append(f"runtime kernel: {node.target.name() if hasattr(node.target, 'name') else node.target}")
    return "; ".join(out)
'''


def require_program_lines(rec: Record, lines: list[str]) -> None:
    """The recorded translation, without its notes and its `lowered:` line, must be exactly `lines`."""
    recorded = [ln for ln in rec.translation.splitlines()
                if not ln.startswith("# exact identity:") and not ln.startswith("lowered: ")]
    if rec.translation.strip() and recorded != lines:
        raise stale(rec)


def _template(rec: Record, case: Case, delegate: bool) -> str:
    inputs = make_inputs(case)
    module, notes = program.described(case, inputs)
    require_program_lines(rec, [*module, *program.program_lines(case, inputs, delegate, "")[:-1]])
    cls, args, pre_pad, crop, _, _ = module_plan(case)
    made, call = module_inputs(case)
    model = model_class_source(case, rec.backend, cls, args, pre_pad, crop)
    identities = "".join(f"# exact identity: {n}\n" for n in notes)
    part = "partitioner=[XnnpackPartitioner()]" if delegate else ""
    imports = ("from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner\n"
               if delegate else "")
    return f'''
import os
import tempfile
import warnings

import torch
import torch.nn.functional as F
{imports}from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


{identities}{model}

{LOWERED_OPS}

def run_framework(x, w, b):
    """torch.export -> to_edge_transform_and_lower({part}) -> .pte -> ExecuTorch's Python runtime."""
    def t(a):  # exact: the values are DTYPE values
        return torch.from_numpy(np.ascontiguousarray(a)).to(getattr(torch, DTYPE)).contiguous()

    model = {made}.eval()
    args = ({call},)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        ep = torch.export.export(model, args)
        edge = to_edge_transform_and_lower(ep{", " + part if part else ""})
        print("lowered:", lowered_ops(edge))
        pte = edge.to_executorch().buffer
    program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
    method = program.load_method("forward")
    # the runtime says why it refuses only in its C++ log (stderr): keep it and show it on a failure
    log = tempfile.TemporaryFile()
    saved = os.dup(2)
    sys.stderr.flush()
    os.dup2(log.fileno(), 2)
    try:
        y = method.execute(list(args))[0]
    except RuntimeError:
        os.dup2(saved, 2)
        log.seek(0)
        print("the runtime's log:", log.read().decode(errors="replace").strip(), sep="\\n")
        raise
    finally:
        os.dup2(saved, 2)
    return y.double().numpy(), str(y.dtype).removeprefix("torch.")
'''


@register("executorch")
def executorch_template(rec: Record, case: Case) -> str:
    """The module lowered with the XNNPACK partitioner, run by ExecuTorch's runtime."""
    return _template(rec, case, delegate=True)


@register("executorch-portable")
def executorch_portable_template(rec: Record, case: Case) -> str:
    """The module lowered without a partitioner (the runtime's own CPU kernels)."""
    return _template(rec, case, delegate=False)


QUANT_CLASSES = PINNED_OBSERVER + '''

class PinnedPerChannelObserver(PinnedObserver):
    """Named so: torchao's prepare passes the spec's ch_axis (1 for a transposed conv's weight, set by the
    quantizer) only to observer classes whose name holds "PerChannel"."""


def quantization_config():
    """XNNPACKQuantizer's scheme (int8 activations, symmetric int8 weights in [-127, 127]) with the case's
    parameters pinned; a uint8 case as int8 with every zero point less 128."""
    shift = 128 if DTYPE == "uint8" else 0

    def act(scale, zero_point):
        return FixedQParamsQuantizationSpec(dtype=torch.int8, scale=float(scale), zero_point=int(zero_point) - shift,
                                            quant_min=-128, quant_max=127, qscheme=torch.per_tensor_affine)

    if PER_CHANNEL:
        scheme, observer = torch.per_channel_symmetric, PinnedPerChannelObserver.with_args(
            scales=[float(s) for s in w_scale], zero_points=[0] * C_OUT)
    else:
        scheme, observer = torch.per_tensor_symmetric, PinnedObserver.with_args(
            scales=[float(w_scale[0])], zero_points=[0])
    weight = QuantizationSpec(dtype=torch.int8, quant_min=-127, quant_max=127, qscheme=scheme, ch_axis=0,
                              is_dynamic=False, observer_or_fake_quant_ctr=observer)
    return QuantizationConfig(act(x_scale, x_zp), act(y_scale, y_zp), weight, None, False)
'''


def executorch_quant_template(rec: Record, case: Case) -> str:
    """PT2E with XNNPACKQuantizer (the case's parameters pinned), lowered to XNNPACK, run by the runtime."""
    inputs = make_inputs(case)
    twin, finputs = quant.float_inputs(case, inputs)
    module, notes = program.described(twin, finputs)
    assert inputs.quant is not None
    require_program_lines(rec, [*module, *quant.flow_lines(case, inputs.quant), *program.quant_lines("")[:-1]])
    cls, args, pre_pad, crop, _, _ = module_plan(twin)
    model = model_class_source(twin, rec.backend, cls, args, pre_pad, crop)
    identities = "".join(f"# exact identity: {n}\n" for n in [*notes, *quant.quant_notes(case)])
    return f'''
import os
import tempfile
import warnings

import torch
import torch.nn.functional as F
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from torchao.quantization.pt2e.observer import ObserverBase
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.quantization.pt2e.quantizer import FixedQParamsQuantizationSpec, QuantizationConfig, QuantizationSpec

{QUANT_CLASSES}

{identities}{model}

def run_framework(x, w, b):
    """What convdiff's executorch adapter does: the float module with the dequantized weights, PT2E with
    XNNPACKQuantizer (the case's parameters pinned), lowered to XNNPACK, run by ExecuTorch's runtime."""
    axis = 1 if TRANSPOSE else 0  # output channels of (C_in, C_out, *k) for a transposed conv
    shape = [1] * w.ndim
    shape[axis] = -1
    w_real = torch.from_numpy((w.astype(np.float64) * w_scale.reshape(shape)).astype(np.float32))
    b_real = None if b is None else torch.from_numpy((b.astype(np.float64) * x_scale * w_scale).astype(np.float32))
    x_real = torch.from_numpy(((x.astype(np.float64) - x_zp) * x_scale).astype(np.float32))  # quantizes back to x
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        gm = torch.export.export(Model(w_real, b_real).eval(), (x_real,)).module()
        prepared = prepare_pt2e(gm, XNNPACKQuantizer().set_global(quantization_config()))
        prepared(x_real)
        gm = convert_pt2e(prepared)
        edge = to_edge_transform_and_lower(torch.export.export(gm, (x_real,)), partitioner=[XnnpackPartitioner()])
        print("lowered:", lowered_ops(edge))
        pte = edge.to_executorch().buffer
    program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
    method = program.load_method("forward")
    y = method.execute([x_real])[0].numpy()  # dequantized: float32((y_int - y_zp) * y_scale)
    y_int = np.clip(np.rint(y.astype(np.float64) / y_scale) + y_zp, QMIN, QMAX).astype(x.dtype)
    return y_int, str(y_int.dtype), "half_to_even"


{LOWERED_OPS}
'''


EXECUTORCH_QUANT_TEMPLATES = {"executorch": executorch_quant_template}
