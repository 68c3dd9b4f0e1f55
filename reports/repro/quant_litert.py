"""Quantized reproducer part for litert and litert-ref: the fully int8 TFLite model of backends/litert/quant.py.

The script does what the adapter does, with the TFLite stack alone (TensorFlow's converter and its
flatbuffer schema, `flatbuffers`, the `ai_edge_litert` interpreter): the float tf.function with the
case's dequantized weights and bias (the tensorflow backend's tf.nn lines, N*C, transposed around for
channels_first), full-integer post-training quantization with x as the representative dataset, then
the case's scales, zero points, int8 filter and int32 bias written into the flatbuffer (the adapter's
`pin`), run on the interpreter with the default XNNPACK delegate (litert) or the reference kernels
(litert-ref). The requantization rounding is read live as the adapter reads it: the delegate's float32
multiplier when a DELEGATE node took the convolution, TFLite's fixed-point multiplier otherwise.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from backends.litert.quant import BIAS_INPUT, DATA_INPUT, FILTER_INPUT, ROUNDING, SAME_SCALE
from backends.tensorflow.translate import in_nc_only, nn_call
from backends.tensorflow.util import weight_transpose
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.quant_lines import require_in

INTERPRETERS = {"litert": "Interpreter(model_content=model)  # default: the XNNPACK delegate",
                "litert-ref": "Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)"
                              "  # reference kernels, no delegate"}

PIN_SOURCE = '''
class Unpinnable(Exception):
    """The converted graph has an op whose quantization the case does not determine."""


def set_quant(tensor, scales, zero_points, axis):
    q = tensor.quantization or schema.QuantizationParametersT()
    q.scale, q.zeroPoint, q.quantizedDimension = [float(np.float32(s)) for s in scales], [int(z) for z in zero_points], axis
    q.min = q.max = None
    tensor.quantization = q


def filter_layout(op, w, shape):
    """The canonical int8 weights in the TFLite filter layout of `op` (shape: the model's filter tensor)."""
    r = len(KERNEL)
    if op == "DEPTHWISE_CONV_2D":  # (C*M, 1, *k) -> (1, *k, C*M)
        out = np.moveaxis(w, 0, -1)
    elif TRANSPOSE:  # (I, O, *k) -> (O, *k, I)
        out = np.transpose(w, (1, *range(2, 2 + r), 0))
    else:  # (O, I/g, *k) -> (O, *k, I/g)
        out = np.transpose(w, (0, *range(2, 2 + r), 1))
    return np.ascontiguousarray(out).reshape(shape)  # 1-D: a height of 1 added


def pin(model, w, b):
    """The converted model with the case's scales and zero points on every tensor from x to the conv and
    from the conv to y (uint8 edges: QUANTIZE to int8, zero point moved by 128), its filter and bias."""
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model, 0))
    sg = m.subgraphs[0]
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    ops = []
    for op in sg.operators:
        code = m.operatorCodes[op.opcodeIndex]
        ops.append((names.get(max(code.builtinCode, code.deprecatedBuiltinCode), str(code.builtinCode)), op))
    print("TFLite ops:", ", ".join(n for n, _ in ops))
    role, conv = {sg.inputs[0]: "x"}, None
    for name, op in ops:
        if name in DATA_INPUT and conv is None and role.get(op.inputs[DATA_INPUT[name]]) == "x":
            conv = (name, op)
            role[op.outputs[0]] = "y"
        elif name in SAME_SCALE or name == "QUANTIZE":
            role[op.outputs[0]] = role[op.inputs[0]]
        else:
            raise Unpinnable(f"the converter wrote {name}, quantized at its own scales, not the case's")
    int8 = schema.TensorType.INT8
    for t, r in role.items():
        tensor = sg.tensors[t]
        scale, zp = (x_scale, x_zp) if r == "x" else (y_scale, y_zp)
        set_quant(tensor, [scale], [zp - (128 if DTYPE == "uint8" and tensor.type == int8 else 0)], 0)
    name, op = conv
    filt = sg.tensors[op.inputs[FILTER_INPUT[name]]]
    axis = 3 if name == "DEPTHWISE_CONV_2D" else 0  # TFLite's output-channel axis of the filter
    scales = list(w_scale) if PER_CHANNEL else [float(w_scale[0])]
    set_quant(filt, scales, [0] * len(scales), axis if PER_CHANNEL else 0)
    m.buffers[filt.buffer].data = np.ascontiguousarray(filter_layout(name, w, tuple(filt.shape)), dtype=np.int8).reshape(-1).view(np.uint8)
    if len(op.inputs) > BIAS_INPUT[name] and op.inputs[BIAS_INPUT[name]] >= 0:
        bias = sg.tensors[op.inputs[BIAS_INPUT[name]]]
        b_int = np.zeros(C_OUT, np.int32) if b is None else b.astype(np.int32)
        set_quant(bias, [x_scale * s for s in (w_scale if PER_CHANNEL else w_scale[:1])], [0] * len(scales), 0)
        m.buffers[bias.buffer].data = np.ascontiguousarray(b_int).reshape(-1).view(np.uint8)
    builder = flatbuffers.Builder(len(model) + 4096)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def delegated(it):
    """Whether a delegate (XNNPACK) took the convolution: a DELEGATE node consumes its filter."""
    ops = it._get_ops_details()
    conv = [o for o in ops if o["op_name"] in DATA_INPUT]
    if not conv:
        return False
    filt = int(conv[0]["inputs"][FILTER_INPUT[conv[0]["op_name"]]])
    return any(o["op_name"] == "DELEGATE" and filt in [int(i) for i in o["inputs"]] for o in ops)
'''


def _body(case: Case) -> list[str]:
    """The tf.function's lines, as the adapter traces them (TFLite convolutions are N*C)."""
    lines = nn_call(case, False).lines(case.bias)
    return lines if case.channels_last else in_nc_only(case.rank, lines)


def litert_template(rec: Record, case: Case) -> str:
    """tf.function -> TFLiteConverter (full integer) -> pin the case's parameters -> the LiteRT interpreter."""
    body = _body(case)
    require_in(rec, ["def f(x):", *(f"    {ln}" for ln in body), "    return y",
                     f"converter.inference_input_type = converter.inference_output_type = tf.{case.dtype}"])
    perm, _ = weight_transpose(case)
    r = case.rank
    if case.transpose:  # canonical (C_in, C_out/g, *k): output channel (i // (C_in/g)) * C_out/g + j
        scale = ("rows = np.arange(C_IN) // (C_IN // GROUPS) * (C_OUT // GROUPS)\n"
                 "    scale = w_scale[rows[:, None] + np.arange(C_OUT // GROUPS)[None, :]]")
    else:
        scale = "scale = w_scale[:, None]"
    return f'''
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import flatbuffers
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from tensorflow.lite.python import schema_py_generated as schema

SAME_SCALE = {sorted(SAME_SCALE)!r}
DATA_INPUT = {DATA_INPUT!r}  # the convolutions' input positions
FILTER_INPUT = {FILTER_INPUT!r}
BIAS_INPUT = {BIAS_INPUT!r}
ROUNDING = {ROUNDING!r}  # the requantization each kernel declares (convdiff backends/litert/quant.py)
{PIN_SOURCE}

def convert(w, b, x_real):
    """The float function with the dequantized weights and bias, fully integer-quantized by the converter."""
    {scale}
    w_real = ((w.astype(np.float64) - w_zp) * scale.reshape(*scale.shape, *(1,) * {r})).astype(np.float32)
    b_real = None if b is None else (b.astype(np.float64) * x_scale * w_scale).astype(np.float32)
    w_np = np.ascontiguousarray(np.transpose(w_real, {perm}))  # TF's filter layout

    def body(x):
        w, b = tf.constant(w_np), None if b_real is None else tf.constant(b_real)
{textwrap.indent(chr(10).join(body), " " * 8)}
        return y

    f = tf.function(body, autograph=False)
    concrete = f.get_concrete_function(tf.TensorSpec({list(case.input_shape)}, tf.float32, name="x"))
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], f)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: iter([[x_real]])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.{case.dtype}
    return converter.convert()


def run_framework(x, w, b):
    """What convdiff's {rec.backend} adapter does, on the {"reference kernels" if rec.backend == "litert-ref" else "default XNNPACK delegate"}."""
    x_real = ((x.astype(np.float64) - x_zp) * x_scale).astype(np.float32)
    model = convert(w, b, x_real)
    try:
        model = pin(model, w, b)
    except Unpinnable as exc:  # as convdiff: the converter's own model refusing to run is the finding
        it = Interpreter(model_content=model)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], np.ascontiguousarray(x))
        it.invoke()
        raise SystemExit(f"{{exc}}: convdiff calls this case unsupported") from None
    it = {INTERPRETERS[rec.backend]}
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.ascontiguousarray(x))
    it.invoke()
    y = np.array(it.get_tensor(it.get_output_details()[0]["index"]))
    for d in (it.get_input_details()[0], it.get_output_details()[0]):
        qp = d["quantization_parameters"]
        print(f"model {{d['name']}}: {{d['dtype'].__name__}}, scale {{list(qp['scales'])}}, zero point {{list(qp['zero_points'])}}")
    rounding = ROUNDING["delegate" if delegated(it) else "builtin"]
    return y, y.dtype.name, rounding
'''


LITERT_TEMPLATES: dict[str, Callable[[Record, Case], str]] = dict.fromkeys(INTERPRETERS, litert_template)
