"""The quantized (uint8/int8) path of `litert` and `litert-ref`: a fully int8 TFLite model.

How a user gets one: the float convolution with the case's dequantized weights and bias
(`(w - w_zp) * w_scale`, `bias * x_scale * w_scale`) traced into the same tf.function as the
float path, converted with full-integer post-training quantization (`optimizations=[DEFAULT]`,
a representative dataset of the case's dequantized x, `supported_ops=[TFLITE_BUILTINS_INT8]`,
`inference_input_type`/`inference_output_type` the case dtype). TFLite's integer kernels are
int8 only: for a uint8 case the converter puts QUANTIZE ops (uint8 <-> int8, same scale, zero
point moved by 128: exact) at the model's edges.

The converter calibrates its own scales, and TFLite has no API to pin them, so the model's
quantization parameters are then set to the case's in the flatbuffer (schema object API): x's
on every tensor from the input to the convolution (QUANTIZE, PAD, RESHAPE, TRANSPOSE carry one
scale through), y's from the convolution's output to the model's, the case's int8 filter and
int32 bias in TFLite's filter layout, per channel along TFLite's quantized dimension or one
per-tensor scale. Every placed filter value is checked against the converter's own quantization
of the same real weights (within half its step), and every scale and zero point is read back
with the interpreter (`get_tensor_details`) and must equal the case's as float32, TFLite's
storage (a pinned scale that is not a float32 value is stored rounded; a note says so).

What the TFLite int8 spec cannot state is `unsupported`: a weight zero point other than 0
(int8 weights are symmetric). The requantization the kernels declare: the reference kernels
(litert-ref) use TFLite's fixed-point multiplier (`MultiplyByQuantizedMultiplier`, rounding
half away from zero, twice); the XNNPACK delegate (litert, when it takes the convolution)
requantizes in float32 and rounds half to even. harness/numerics/bound.py `quant_units` turns
the declared rounding into the allowed units.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from backends.base import Rejected, Unsupported, first_line
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.quant import QParams

SAME_SCALE = {"PAD", "PADV2", "RESHAPE", "TRANSPOSE", "SQUEEZE", "EXPAND_DIMS", "STRIDED_SLICE", "SLICE"}
DATA_INPUT = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 0, "CONV_3D": 0, "TRANSPOSE_CONV": 2, "CONV_3D_TRANSPOSE": 2}
FILTER_INPUT = {"CONV_2D": 1, "DEPTHWISE_CONV_2D": 1, "CONV_3D": 1, "TRANSPOSE_CONV": 1, "CONV_3D_TRANSPOSE": 1}
BIAS_INPUT = {"CONV_2D": 2, "DEPTHWISE_CONV_2D": 2, "CONV_3D": 2, "TRANSPOSE_CONV": 3, "CONV_3D_TRANSPOSE": 3}
ROUNDING = {"delegate": "half_to_even", "builtin": "fixed_point_half_away"}
REQUANT = {"half_to_even": "XNNPACK delegate: float32 multiplier, rounded half to even",
           "fixed_point_half_away": "TFLite integer kernels: fixed-point multiplier (MultiplyByQuantizedMultiplier), "
                                    "rounded half away from zero"}


class Unpinnable(Exception):
    """The converted graph has an op whose quantization the case does not determine."""


def quant_reason(case: Case) -> str | None:
    """Why TFLite cannot state this quantized case as an int8 model (None when it can)."""
    if case.rank == 3:  # measured with TF 2.21's converter; pin() checks it on every model
        op = "CONV_3D_TRANSPOSE" if case.transpose else "CONV_3D"
        return (f"TFLite has no int8 {op} kernel: full-integer conversion keeps it float32 between "
                f"DEQUANTIZE and QUANTIZE (ops: TRANSPOSE, DEQUANTIZE, {op}, QUANTIZE, ADD, TRANSPOSE)")
    zw = case.quant.w_zero_point if case.quant is not None else None
    if zw:
        return (f"TFLite int8 quantization spec: convolution weights are symmetric (zero point 0); "
                f"w_zero_point {zw} cannot be stated")
    return None


def salt(p: QParams) -> dict[str, Any]:
    """What the model bakes in besides w and b: the case's quantization parameters."""
    return {"qparams": [p.x_scale, p.x_zero_point, [float(s) for s in p.w_scale], p.w_zero_point,
                        p.y_scale, p.y_zero_point, p.per_channel]}


def real_inputs(case: Case, inputs: Inputs) -> tuple[Inputs, np.ndarray]:
    """(float32 inputs with the dequantized w and b, the dequantized x) for the float function."""
    p = inputs.quant
    assert p is not None
    w = inputs.w.astype(np.float64) - p.w_zero_point
    g = case.groups
    if case.transpose:  # canonical (C_in, C_out/g, *k): output channel (i // (C_in/g)) * C_out/g + j
        rows = np.arange(case.in_channels) // (case.in_channels // g) * (case.out_channels // g)
        scale = p.w_scale[rows[:, None] + np.arange(case.out_channels // g)[None, :]]
    else:
        scale = p.w_scale[:, None]
    w_real = (w * scale.reshape(*scale.shape, *(1,) * case.rank)).astype(np.float32)
    b_real = None if inputs.b is None else (inputs.b.astype(np.float64) * p.x_scale * p.w_scale).astype(np.float32)
    x_real = ((inputs.x.astype(np.float64) - p.x_zero_point) * p.x_scale).astype(np.float32)
    return replace(inputs, w=w_real, b=b_real, quant=None), x_real


def convert(backend: Any, case: Case, inputs: Inputs) -> tuple[bytes, dict[str, Any]]:
    """The fully int8 flatbuffer with the case's quantization parameters: (model, meta)."""
    real, x_real = real_inputs(case, inputs)
    concrete, fn, record = backend.trace(case, real, "float32")
    tf = backend.tfb.tf
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: iter([[x_real]])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = getattr(tf, case.dtype)
    converted = converter.convert()
    try:
        model, notes = pin(converted, case, inputs)
    except Unpinnable as exc:  # a graph with ops at the converter's own scales
        refused = invoke_refusal(backend.interpreter(converted), inputs.x)
        if refused:  # the converter's model cannot run at all: that is the finding
            raise Rejected(refused) from None
        raise Unsupported(str(exc)) from None
    check(backend.interpreter(model), case, inputs.quant)
    return model, {"lines": record["lines"], "notes": [*record["notes"], *notes]}


def pin(model: bytes, case: Case, inputs: Inputs) -> tuple[bytes, list[str]]:
    """The converted model with the case's scales, zero points, filter and bias written in."""
    import flatbuffers
    from tensorflow.lite.python import schema_py_generated as schema

    p = inputs.quant
    assert p is not None
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model, 0))
    sg = m.subgraphs[0]
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    ops = []
    for op in sg.operators:
        code = m.operatorCodes[op.opcodeIndex]
        ops.append((names.get(max(code.builtinCode, code.deprecatedBuiltinCode), str(code.builtinCode)), op))
    for name, op in ops:
        if name in DATA_INPUT and sg.tensors[op.inputs[DATA_INPUT[name]]].type != schema.TensorType.INT8:
            raise Unsupported(f"TFLite has no int8 {name} kernel: full-integer conversion keeps it float32 "
                              f"between DEQUANTIZE and QUANTIZE (ops: {', '.join(n for n, _ in ops)})")
    role = {sg.inputs[0]: "x"}
    conv = None
    for name, op in ops:
        if name in DATA_INPUT:
            if conv is not None or role.get(op.inputs[DATA_INPUT[name]]) != "x":
                raise Unpinnable(f"the converter wrote a second convolution or ops before {name}: "
                                 f"{', '.join(n for n, _ in ops)}")
            conv = (name, op)
            role[op.outputs[0]] = "y"
        elif name in SAME_SCALE or name == "QUANTIZE":
            role[op.outputs[0]] = role[op.inputs[0]]
        else:
            raise Unpinnable(f"the converter wrote {name} ({', '.join(n for n, _ in ops)}), quantized at the "
                             f"converter's own scales, not the case's")
    if conv is None or role.get(sg.outputs[0]) != "y":
        raise AssertionError("litert quantized: no convolution between the model's input and output")
    int8 = schema.TensorType.INT8
    for t, r in role.items():
        tensor = sg.tensors[t]
        scale, zp = (p.x_scale, p.x_zero_point) if r == "x" else (p.y_scale, p.y_zero_point)
        shift = 128 if case.dtype == "uint8" and tensor.type == int8 else 0
        set_quant(schema, tensor, [scale], [zp - shift], 0)
    name, op = conv
    filt, axis = sg.tensors[op.inputs[FILTER_INPUT[name]]], filter_axis(name)
    w_tfl = filter_layout(case, name, inputs.w, tuple(filt.shape))
    check_layout(w_tfl, filt, sg, m, axis, p.w_scale)
    scales = list(p.w_scale) if p.per_channel else [float(p.w_scale[0])]
    set_quant(schema, filt, scales, [0] * len(scales), axis if p.per_channel else 0)
    m.buffers[filt.buffer].data = np.ascontiguousarray(w_tfl, dtype=np.int8).reshape(-1).view(np.uint8)
    bias_index = op.inputs[BIAS_INPUT[name]] if len(op.inputs) > BIAS_INPUT[name] else -1
    if bias_index < 0:
        if inputs.b is not None:
            raise AssertionError("litert quantized: the converter dropped the bias")
    else:
        bias = sg.tensors[bias_index]
        b = np.zeros(case.out_channels, np.int32) if inputs.b is None else inputs.b.astype(np.int32)
        b_scales = [p.x_scale * s for s in (p.w_scale if p.per_channel else p.w_scale[:1])]
        set_quant(schema, bias, b_scales, [0] * len(b_scales), 0)
        m.buffers[bias.buffer].data = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
    builder = flatbuffers.Builder(len(model) + 4096)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    notes = [f"converter: full-integer quantization ({name}, {'per-channel' if p.per_channel else 'per-tensor'} "
             f"int8 filter); scales and zero points set to the case's in the flatbuffer"]
    if float(np.float32(p.y_scale)) != p.y_scale:
        notes.append(f"y_scale {p.y_scale!r} stored as float32 {float(np.float32(p.y_scale))!r} (TFLite scales are float32)")
    return bytes(builder.Output()), notes


def set_quant(schema: Any, tensor: Any, scales: list[float], zps: list[int], axis: int) -> None:
    q = tensor.quantization or schema.QuantizationParametersT()
    q.scale, q.zeroPoint, q.quantizedDimension = [float(np.float32(s)) for s in scales], [int(z) for z in zps], axis
    q.min = q.max = None
    tensor.quantization = q


def filter_axis(op: str) -> int:
    """TFLite's output-channel axis of the filter: OHWI (CONV_2D, TRANSPOSE_CONV), 1HW(C*M) depthwise.
    (CONV_3D and CONV_3D_TRANSPOSE have no int8 kernel: pin() refuses them first.)"""
    return 3 if op == "DEPTHWISE_CONV_2D" else 0


def filter_layout(case: Case, op: str, w: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The canonical int8 weights in the TFLite filter layout of `op` (shape: the model's tensor)."""
    r = case.rank
    if op == "DEPTHWISE_CONV_2D":     # (C*M, 1, *k) -> (1, *k, C*M)
        out = np.moveaxis(w, 0, -1)
    elif case.transpose:              # (I, O, *k) -> (O, *k, I)
        out = np.transpose(w, (1, *range(2, 2 + r), 0))
    else:                             # (O, I/g, *k) -> (O, *k, I/g)
        out = np.transpose(w, (0, *range(2, 2 + r), 1))
    return np.ascontiguousarray(out).reshape(shape)  # 1-D: a height of 1 added


def check_layout(w_tfl: np.ndarray, filt: Any, sg: Any, m: Any, axis: int, w_scale: np.ndarray) -> None:
    """The placed filter agrees with the converter's own quantization of the same real weights."""
    q = np.frombuffer(bytes(m.buffers[filt.buffer].data), dtype=np.int8).reshape(w_tfl.shape)
    s = np.asarray(filt.quantization.scale, dtype=np.float64)
    shape = [1] * w_tfl.ndim
    shape[axis] = -1
    conv_s = s.reshape(shape) if s.size > 1 else s
    ours = w_tfl * np.asarray(w_scale).reshape(shape)
    if np.any(np.abs(q * conv_s - ours) > conv_s * (0.5 + 1e-5)):
        raise AssertionError("litert quantized: the filter layout disagrees with the converter's quantized filter")


def check(interpreter: Any, case: Case, p: QParams | None) -> None:
    """Read the model's quantization back: the input, the output and the filter carry the case's."""
    assert p is not None
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    for d, (scale, zp) in ((interpreter.get_input_details()[0], (p.x_scale, p.x_zero_point)),
                           (interpreter.get_output_details()[0], (p.y_scale, p.y_zero_point))):
        qp = d["quantization_parameters"]
        if d["dtype"].__name__ != case.dtype or list(qp["scales"]) != [f32(scale)] or list(qp["zero_points"]) != [zp]:
            raise Unsupported(f"TFLite model {d['name']}: {d['dtype'].__name__} scale {list(qp['scales'])} "
                              f"zero point {list(qp['zero_points'])}, the case's {case.dtype} {scale} {zp}")
    want = sorted(f32(s) for s in (p.w_scale if p.per_channel else p.w_scale[:1]))
    for d in interpreter.get_tensor_details():
        qp = d["quantization_parameters"]
        if d["dtype"] == np.int8 and len(d["shape"]) >= 3 and sorted(qp["scales"]) == want:
            return
    raise Unsupported("TFLite model: no int8 filter tensor carries the case's weight scales")


def invoke_refusal(interpreter: Any, x: np.ndarray) -> str | None:
    """The interpreter's refusal of a model (its first line), or None when it runs."""
    try:
        interpreter.allocate_tensors()
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], np.ascontiguousarray(x))
        interpreter.invoke()
    except Exception as exc:  # noqa: BLE001 - any refusal is the answer
        return first_line(exc)
    return None


def delegated(interpreter: Any) -> bool:
    """Whether a delegate (XNNPACK) took the model's convolution: a DELEGATE node consumes its filter."""
    ops = interpreter._get_ops_details()
    conv = [o for o in ops if o["op_name"] in DATA_INPUT]
    if not conv:
        return False
    filt = int(conv[0]["inputs"][FILTER_INPUT[conv[0]["op_name"]]])
    return any(o["op_name"] == "DELEGATE" and filt in [int(i) for i in o["inputs"]] for o in ops)


def translation_lines(case: Case) -> list[str]:
    """The converter settings of the quantized path, as a user writes them."""
    return [
        "converter.optimizations = [tf.lite.Optimize.DEFAULT]",
        "converter.representative_dataset = lambda: iter([[(x_int - x_zero_point) * x_scale]])",
        "converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]",
        f"converter.inference_input_type = converter.inference_output_type = tf.{case.dtype}",
        "tflite_model = converter.convert()",
        "tflite_model = pin(tflite_model)  # the case's scales/zero points, int8 filter, int32 bias written into "
        "the flatbuffer (schema_py_generated ModelT)",
    ]
