"""The framework's most direct way to express a probe cell, written here, apart from the adapters.

tests/test_probe.py runs one of these as a script in a process of its own (one framework per
process, forked from an interpreter that imported it: tests/helpers.py run_named_scripts) for every
cell an adapter declares `unsupported`: if the framework accepts the call and gives the
oracle's answer, the declaration is wrong. Each script defines
`direct(case, x, w, b) -> array in the case layout`, from the canonical case alone:
explicit (before, after) pads and the transposed tail from `case.geometry`, channels-first
data (a channels_last cell is moved with an exact permutation), the dtype as given.
PRELUDE runs the cells and prints, per cell, whether the call was accepted and matched.
"""

from __future__ import annotations

# backend -> the attempts that speak for it (default: its own name). A chain of frameworks
# (converter -> runtime) expresses a cell only if every stage does: the cell counts as expressible
# when all of its attempts accept it and give the oracle's answer.
ROUTES: dict[str, tuple[str, ...]] = {
    "tvm-onnx-import-output-shape": ("tvm-onnx-import",),
    "paddle-output-size": ("paddle",),
    "torch-onnx-ort": ("onnxruntime",),            # torch states every cell; the runtime's registry decides
    "tf2onnx-ort": ("tensorflow", "onnxruntime"),
    "paddle2onnx-ort": ("paddle", "onnxruntime"),  # Paddle builds the layer (on the CPU), the runtime runs it
    "tensorflow-graph": ("tensorflow",),           # the same tf.nn calls, traced
    "tf-xla": ("tensorflow",),
    "paddle-inference": ("paddle",),               # the same paddle calls, saved and run by the predictor
    "litert": ("tvm-tflite-import",),              # the TFLite converter decides what a TFLite model can say
    "litert-ref": ("tvm-tflite-import",),
}

# Cells every attempt must express and get right: an attempt that refuses everything proves nothing.
CONTROL = ["conv2d_pad1", "conv_transpose2d_outpad1"]
CONTROL_FOR = {"tvm-tflite-import": ["conv2d_pad1", "conv1d_pad_asym"]}  # TVM cannot lower TFLite's transposes

PRELUDE = r'''
import json, pickle, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from harness.numerics.bound import error_bound
from harness.numerics.inputs import make_inputs
from harness.numerics.oracle import reference

def nc(a, case):
    return np.moveaxis(a, -1, 1) if case.channels_last else a

def back(a, case):
    return np.moveaxis(a, 1, -1) if case.channels_last else a

def main():
    cases = pickle.load(open(sys.argv[2], "rb"))
    out = []
    for case in cases:
        i = make_inputs(case)
        ref, scale = reference(case, i.x, i.w, i.b)
        try:
            y = np.asarray(direct(case, i.x, i.w, i.b)).astype(np.float64)
        except Exception as exc:
            out.append({"id": case.id, "accepted": False, "matches": False,
                        "message": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]})
            continue
        ok = y.shape == ref.shape and bool(np.all(np.abs(y - ref) <= error_bound(case, ref, scale)))
        out.append({"id": case.id, "accepted": True, "matches": ok, "message": f"shape {y.shape}, expected {ref.shape}"})
    print(json.dumps(out))
'''

PADDLE = r'''
import paddle
import paddle.nn.functional as F

def direct(case, x, w, b):
    geo = case.geometry
    name = f"conv{case.rank}d" + ("_transpose" if case.transpose else "")
    t = lambda a: None if a is None else paddle.to_tensor(np.asarray(a, np.float32)).astype(case.dtype)
    fmt = {1: "NCL", 2: "NCHW", 3: "NCDHW"}[case.rank]
    kw = dict(stride=list(case.stride), dilation=list(case.dilation), groups=case.groups, data_format=fmt,
              padding=[[0, 0], [0, 0], *map(list, geo.pads)])
    if case.transpose:
        kw["output_padding"] = list(geo.extend)
    y = getattr(F, name)(t(nc(x, case)), t(w), t(b), **kw)
    return back(y.astype("float32").numpy(), case)
'''

TF_COMMON = r'''
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf

def nhwc(a, case):  # channels-first canonical x -> N*C
    return np.ascontiguousarray(np.moveaxis(nc(a, case), 1, -1))

def from_nhwc(y, case):
    y = np.moveaxis(np.asarray(y, np.float64), -1, 1)
    return back(y, case)

def tensor(a, case):
    return tf.constant(np.asarray(a, np.float32), dtype=getattr(tf, case.dtype))
'''

TENSORFLOW = TF_COMMON + r'''
def direct(case, x, w, b):
    """tf.nn with a grouped filter (I/g) as the only groups API TF has, explicit pads via tf.pad / crop."""
    geo = case.geometry
    r = case.rank
    xs = tensor(nhwc(x, case), case)
    if not case.transpose:
        filt = tensor(np.moveaxis(w, [0, 1], [-1, -2]), case)  # (*k, I/g, O)
        xs = tf.pad(xs, [[0, 0], *map(list, geo.pads), [0, 0]])
        y = tf.nn.convolution(xs, filt, strides=list(case.stride), dilations=list(case.dilation), padding="VALID")
    else:
        filt = tensor(np.moveaxis(w, [0, 1], [-1, -2]), case)  # (*k, O/g, I): TF's transposed filter with groups
        full = [(l - 1) * s + d * (k - 1) + 1 + e for l, s, d, k, e in
                zip(case.input_size, case.stride, case.dilation, case.kernel_size, geo.extend)]
        fn = {1: tf.nn.conv1d_transpose, 2: tf.nn.conv2d_transpose, 3: tf.nn.conv3d_transpose}[r]
        y = fn(xs, filt, [case.batch, *full, case.out_channels], strides=list(case.stride), padding="VALID",
               dilations=list(case.dilation))
        y = y[(slice(None), *(slice(pb, f - pa) for (pb, pa), f in zip(geo.pads, full)), slice(None))]
    if b is not None:
        y = y + tensor(b, case)
    return from_nhwc(tf.cast(y, tf.float64).numpy(), case)
'''

KERAS = TF_COMMON + r'''
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
import keras

def direct(case, x, w, b):
    """The Keras layer with the cell's arguments as written (groups= on a transposed layer, strides with dilation)."""
    geo = case.geometry
    r = case.rank
    xs = np.pad(nhwc(x, case), [[0, 0], *map(list, geo.pads), [0, 0]]) if not case.transpose else nhwc(x, case)
    kw = dict(strides=case.stride, dilation_rate=case.dilation, padding="valid", use_bias=b is not None,
              dtype=case.dtype)
    if case.groups > 1:
        kw["groups"] = case.groups
    if case.transpose:
        kw["output_padding"] = tuple(geo.extend) if any(geo.extend) else None
        layer = getattr(keras.layers, f"Conv{r}DTranspose")(case.out_channels, case.kernel_size, **kw)
        wk = np.moveaxis(w, [0, 1], [-1, -2])  # (*k, O/g, I)
    else:
        layer = getattr(keras.layers, f"Conv{r}D")(case.out_channels, case.kernel_size, **kw)
        wk = np.moveaxis(w, [0, 1], [-1, -2])  # (*k, I/g, O)
    layer.build(xs.shape)
    layer.set_weights([np.asarray(wk, np.float32)] + ([np.asarray(b, np.float32)] if b is not None else []))
    y = np.asarray(keras.ops.convert_to_numpy(keras.ops.cast(layer(tensor(xs, case)), "float64")))
    if case.transpose:
        y = y[(slice(None), *(slice(pb, n - pa) for (pb, pa), n in zip(geo.pads, y.shape[1:-1])), slice(None))]
    return from_nhwc(y, case)
'''

ONNX_COMMON = r'''
import onnx
from onnx import TensorProto, helper, numpy_helper

ELEM = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "float16": TensorProto.FLOAT16,
        "bfloat16": TensorProto.BFLOAT16}

def init(name, a, case):
    if case.dtype == "bfloat16":  # numpy_helper has no bfloat16 arrays: raw bits
        bits = np.asarray(a, np.float32).view(np.uint32) >> 16
        t = helper.make_tensor(name, ELEM[case.dtype], a.shape, bits.astype(np.uint16).tobytes(), raw=True)
        return t
    return numpy_helper.from_array(np.asarray(a, np.float32).astype(case.dtype), name)

def model(case, w, b):
    """One Conv / ConvTranspose node, pads explicit, the transposed tail as output_padding."""
    geo = case.geometry
    attrs = dict(strides=list(case.stride), dilations=list(case.dilation), group=case.groups,
                 kernel_shape=list(case.kernel_size),
                 pads=[p[0] for p in geo.pads] + [p[1] for p in geo.pads])
    if case.transpose:
        attrs["output_padding"] = list(geo.extend)
    inputs = ["x", "w"] + (["b"] if b is not None else [])
    node = helper.make_node("ConvTranspose" if case.transpose else "Conv", inputs, ["y"], **attrs)
    out_shape = [case.batch, case.out_channels, *geo.out_size]
    graph = helper.make_graph([node], "cell",
                              [helper.make_tensor_value_info("x", ELEM[case.dtype], [case.batch, case.in_channels, *case.input_size])],
                              [helper.make_tensor_value_info("y", ELEM[case.dtype], out_shape)],
                              [init("w", w, case)] + ([init("b", b, case)] if b is not None else []))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    return m

def x_in(x, case):
    a = np.ascontiguousarray(nc(x, case))
    return a if case.dtype != "bfloat16" else a  # ml_dtypes bfloat16 arrays as they are
'''

ORT = ONNX_COMMON + r'''
import onnxruntime as ort

def direct(case, x, w, b):
    sess = ort.InferenceSession(model(case, w, b).SerializeToString(), providers=["CPUExecutionProvider"])
    return back(np.asarray(sess.run(None, {"x": x_in(x, case)})[0], np.float64), case)
'''

OPENVINO = ONNX_COMMON + r'''
import openvino as ov

def direct(case, x, w, b):
    core = ov.Core()
    compiled = core.compile_model(core.read_model(model(case, w, b).SerializeToString()), "CPU")
    y = np.asarray(compiled({"x": x_in(x, case)})[compiled.output(0)])
    if case.dtype == "bfloat16":  # OpenVINO hands bf16 back as float16-typed bits
        import ml_dtypes
        y = y.view(ml_dtypes.bfloat16)
    return back(y.astype(np.float64), case)
'''

TVM_ONNX = ONNX_COMMON.replace("import onnx\n", "import tvm\nfrom tvm import relax\nfrom tvm.relax.frontend.onnx import from_onnx\nimport onnx\n", 1) + r'''
def direct(case, x, w, b):
    mod = from_onnx(model(case, w, b), keep_params_in_input=False)
    exe = tvm.compile(mod, target="llvm")
    y = relax.VirtualMachine(exe, tvm.cpu(0))["main"](tvm.runtime.tensor(x_in(x, case)))
    y = y[0] if isinstance(y, (list, tuple)) else y
    return back(np.asarray(y.numpy(), np.float64), case)
'''


TVM_TFLITE = r'''
import os
import tvm
from tvm import relax
from tvm.relax.frontend.tflite import from_tflite
import tflite
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf

def direct(case, x, w, b):
    """A tf.function in the cell's dtype (N*C, tf.nn with a grouped filter), TFLiteConverter, from_tflite."""
    geo = case.geometry
    r = case.rank
    dt = getattr(tf, case.dtype)
    filt = tf.constant(np.asarray(np.moveaxis(w, [0, 1], [-1, -2]), np.float32), dtype=dt)
    bias = None if b is None else tf.constant(np.asarray(b, np.float32), dtype=dt)
    full = [(l - 1) * s + d * (k - 1) + 1 + e for l, s, d, k, e in
            zip(case.input_size, case.stride, case.dilation, case.kernel_size, geo.extend)]

    def body(xs):
        if not case.transpose:
            xs = tf.pad(xs, [[0, 0], *map(list, geo.pads), [0, 0]])
            y = tf.nn.convolution(xs, filt, strides=list(case.stride), dilations=list(case.dilation), padding="VALID")
        else:
            fn = {1: tf.nn.conv1d_transpose, 2: tf.nn.conv2d_transpose, 3: tf.nn.conv3d_transpose}[r]
            y = fn(xs, filt, [case.batch, *full, case.out_channels], strides=list(case.stride), padding="VALID",
                   dilations=list(case.dilation))
            y = y[(slice(None), *(slice(pb, f - pa) for (pb, pa), f in zip(geo.pads, full)), slice(None))]
        return y if bias is None else y + bias

    shape = [case.batch, *case.input_size, case.in_channels]
    fn = tf.function(body, input_signature=[tf.TensorSpec(shape, dt)])
    buf = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn).convert()
    mod = from_tflite(tflite.Model.GetRootAsModel(buf, 0))
    exe = tvm.compile(mod, target="llvm")
    xs = np.ascontiguousarray(np.moveaxis(nc(x, case), 1, -1))
    y = relax.VirtualMachine(exe, tvm.cpu(0))["main"](tvm.runtime.tensor(xs))
    y = y[0] if isinstance(y, (list, tuple)) else y
    return back(np.moveaxis(np.asarray(y.numpy(), np.float64), -1, 1), case)
'''

DIRECT = {"paddle": PADDLE, "tensorflow": TENSORFLOW, "tensorflow-keras": KERAS, "onnxruntime": ORT,
          "openvino": OPENVINO, "tvm-onnx-import": TVM_ONNX, "tvm-tflite-import": TVM_TFLITE}


def script(route: str) -> str:
    return DIRECT[route] + PRELUDE + "\nmain()\n"
