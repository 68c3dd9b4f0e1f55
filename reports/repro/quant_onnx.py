"""Quantized reproducer parts for the ONNX paths: onnxruntime (QLinearConv for convs, QDQ for
transposes), onnxruntime-qdq (QDQ for all six ops) and openvino (QDQ, its low-precision transformations).

The script builds the model the adapters build (backends/onnx/qmodel.py): the nodes from qmodel's
pure `quant_nodes`, the initializers as `quant_initializers` writes them (float32 scales, zero points
in their tensor's type, int8 w, int32 b, the QDQ bias scale float32(x_scale) * float32(w_scale)),
then runs it as the adapter does: an ORT session at default options saving its optimized model
(the script prints which nodes ORT really ran), or OpenVINO's CPU plugin at default properties (the
script prints the runtime precision of its convolution). The record's model lines must be the ones
qmodel's `quant_lines` writes for the case (else ReproUnavailable: the adapter changed).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from backends.onnx.model import OPSET, node_attributes
from backends.onnx.onnxruntime_backend import PROVIDERS, OnnxRuntimeBackend
from backends.onnx.qmodel import ONNX_INT, form_for, quant_lines, quant_nodes
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.quant_lines import require_in
from reports.repro.torch_module import kwargs_source

FORMS = {"onnxruntime": "qlinear", "onnxruntime-qdq": "qdq", "openvino": "qdq"}


def model_source(rec: Record, case: Case, form: str) -> str:
    """`def build_model(w, b)`: the checked quantized model of `form`, as convdiff's qmodel builds it."""
    attrs, notes = node_attributes(case)
    q = case.quant
    per_channel = q is not None and (q.per_channel or isinstance(q.w_scale, tuple))
    stand_in: Any = SimpleNamespace(quant=SimpleNamespace(per_channel=per_channel))  # quant_lines reads only this
    lines, _ = quant_lines(case, attrs, form, stand_in, notes)
    require_in(rec, lines)
    nodes = ",\n".join(f"helper.make_node({op!r}, {ins!r}, {outs!r}{', ' if kw else ''}{kwargs_source(kw)})"
                       for op, ins, outs, kw in quant_nodes(case, attrs, form, case.bias))
    sw_w = ("sw.reshape(GROUPS, -1)[0] if PER_CHANNEL else sw  # DequantizeLinear axis 1 of (C_in, C_out/g, *k): "
            "C_out/g scales, shared by the groups" if form == "qdq" and case.transpose else
            "sw  # one scale per output channel (axis 0 of w)")
    return f'''
FORM = {form!r}  # qlinear: one QLinearConv node; qdq: DequantizeLinear -> {"ConvTranspose" if case.transpose else "Conv"} -> QuantizeLinear


def initializers(w, b):
    """Initializer name -> array, as convdiff writes them: float32 scales, zero points in their tensor's type."""
    sw = w_scale
    sw_w = {sw_w}
    out = {{
        "x_scale": np.asarray(x_scale, np.float32), "x_zero_point": np.asarray(x_zp, XT),
        "w": np.ascontiguousarray(w, dtype=np.int8),
        "w_scale": sw_w.astype(np.float32) if PER_CHANNEL else np.asarray(sw[0], np.float32),
        "w_zero_point": np.full(sw_w.shape, w_zp, np.int8) if PER_CHANNEL else np.asarray(w_zp, np.int8),
        "y_scale": np.asarray(y_scale, np.float32), "y_zero_point": np.asarray(y_zp, XT),
    }}
    if b is not None:
        out["b"] = np.asarray(b, np.int32)
        if FORM == "qdq":  # the bias scale a quantizer writes: x_scale * w_scale, float32
            prod = np.float32(x_scale) * sw.astype(np.float32)
            out["b_scale"] = prod if PER_CHANNEL else np.asarray(prod[0], np.float32)
    return out


def build_model(w, b):
    """The quantized model convdiff's {rec.backend} adapter builds (opset {OPSET})."""
    elem = onnx.TensorProto.{ONNX_INT[case.dtype]}
    nodes = [
{textwrap.indent(nodes, " " * 8)},
    ]
    inits = [numpy_helper.from_array(a, name) for name, a in initializers(w, b).items()]
    graph = helper.make_graph(nodes, "convdiff_quant", [helper.make_tensor_value_info("x", elem, {list(case.input_shape)})],
                              [helper.make_tensor_value_info("y", elem, {list(case.output_shape)})], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", {OPSET})])
    onnx.checker.check_model(model)
    return model
'''


def ort_template(rec: Record, case: Case) -> str:
    """The model in an InferenceSession at default options, its optimized graph saved and printed."""
    form = form_for(case, FORMS[rec.backend])
    require_in(rec, ["onnx.checker.check_model(model)",
                     "so = ort.SessionOptions(); so.optimized_model_filepath = 'optimized.onnx'  # all else default",
                     OnnxRuntimeBackend().session_line(rec.device).replace("])", "], sess_options=so)"),
                     "y = sess.run(None, {'x': x})[0]"])
    return "\nimport os\nimport tempfile\n\nimport onnx\nimport onnxruntime as ort\nfrom onnx import helper, numpy_helper\n" + \
        model_source(rec, case, form) + f'''

def run_framework(x, w, b):
    """An InferenceSession on {PROVIDERS[rec.device]}, default options; the optimized graph printed."""
    ort.set_default_logger_severity(3)
    model = build_model(w, b)
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.optimized_model_filepath = os.path.join(tmp, "optimized.onnx")  # all else default
        sess = ort.InferenceSession(model.SerializeToString(), sess_options=so, providers=[{PROVIDERS[rec.device]!r}])
        y = np.asarray(sess.run(None, {{sess.get_inputs()[0].name: x}})[0])
        if os.path.exists(so.optimized_model_filepath):
            opt = onnx.load(so.optimized_model_filepath)
            ops = [n.op_type if n.domain in ("", "ai.onnx") else f"{{n.domain}}.{{n.op_type}}" for n in opt.graph.node]
            print("ONNX Runtime ran:", " -> ".join(ops))
    return y, str(y.dtype), "half_to_even"
'''


def openvino_template(rec: Record, case: Case) -> str:
    """The QDQ model read and compiled by OpenVINO for CPU at default properties."""
    require_in(rec, ["onnx.checker.check_model(model)",
                     "compiled = ov.Core().compile_model(ov.Core().read_model(model.SerializeToString()), 'CPU')",
                     "y = compiled({'x': x})[compiled.output(0)]"])
    return "\nimport onnx\nimport openvino as ov\nfrom onnx import helper, numpy_helper\n" + model_source(rec, case, "qdq") + '''

def run_framework(x, w, b):
    """OpenVINO's CPU plugin, every property at its default; its int8 convolution's precision printed."""
    core = ov.Core()
    compiled = core.compile_model(core.read_model(build_model(w, b).SerializeToString()), "CPU")
    y = np.asarray(compiled({"x": x})[compiled.output(0)])
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        kind = info["layerType"].astype(str) if "layerType" in info else "?"
        if "conv" in kind.lower():
            prec, prim = (info[k].astype(str) if k in info else "?" for k in ("runtimePrecision", "primitiveType"))
            print(f"OpenVINO ran {kind}: {prec}/{prim}")
    return y, str(y.dtype), "half_to_even"
'''


ONNX_TEMPLATES: dict[str, Callable[[Record, Case], str]] = {
    "onnxruntime": ort_template, "onnxruntime-qdq": ort_template, "openvino": openvino_template}
