"""Reproducer templates for the ONNX backends (see reports/repro/script.py for the script around them).

`onnxruntime` and `openvino` scripts build the adapter's one-node model from the shared
builder's pure functions (backends/onnx/model.py: node_attributes + graph_nodes), then run
it in an InferenceSession / compile it for OpenVINO's CPU plugin at default hints. The
converter scripts build what the adapters build from their own plans (the torch module's
forward, the tensorflow backend's tf.nn calls, the paddle layer's arguments), convert it
with the exporter's defaults, in memory or in a temporary directory, and run it in ONNX
Runtime. When the record has a translation, the plan's key line must be in it, else
ReproUnavailable: the adapter changed since the record was made.
"""

from __future__ import annotations

import textwrap

from backends.onnx.model import dtype_reason, epilogue_lines, node_attributes
from backends.onnx.onnxruntime_backend import PROVIDERS
from backends.onnx.paddle2onnx_ort import Paddle2OnnxOrtBackend
from backends.onnx.paddle2onnx_ort import epilogue_lines as paddle2onnx_epilogue_lines
from backends.tensorflow.eager import TensorFlowBackend
from backends.tensorflow.epilogue import Epilogue
from backends.tensorflow.translate import nn_call
from backends.tensorflow.util import weight_transpose
from backends.torch.module import epilogue_lines as epilogue_lines_torch
from backends.torch.module import module_plan
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.epilogue import assign, constants, residual_names, vector_names
from reports.repro.onnx_model import build_model_source
from reports.repro.registry import ReproUnavailable, register, stale
from reports.repro.torch_module import kwargs_source, model_class_source, module_inputs

# Shared by every script: arrays in the case dtype (ONNX Conv has float16/float/double only), one ORT session.
ORT_RUNNER = '''
def case_dtype(a):
    return np.ascontiguousarray(a.astype(DTYPE))  # exact: the values are DTYPE values


def run_onnx(model_bytes, x, *more):
    """An InferenceSession with default options on the {provider}; x fed to the model's first input, the
    epilogue's residuals (if any) to the next ones in order."""
    sess = ort.InferenceSession(model_bytes, providers=[{provider!r}])
    y = sess.run(None, {{i.name: case_dtype(a) for i, a in zip(sess.get_inputs(), (x, *more))}})[0]
    return y.astype(np.float64), str(y.dtype)
'''


def _check(rec: Record, key_line: str, epilogue: list[str] | None = None) -> None:
    """Refuse a record whose translation no longer contains the line this script is built from (nor,
    with an epilogue, the epilogue's lines)."""
    recorded = {ln.strip() for ln in rec.translation.splitlines()}  # some adapters indent a function's body
    if rec.translation.strip() and (key_line not in rec.translation or not all(ln in recorded for ln in epilogue or [])):
        raise stale(rec)


def _more(case: Case) -> str:
    """The residual arguments after x, for an epilogue with residuals."""
    return ", *RESIDUALS" if residual_names(case) else ""


def _runnable(rec: Record, case: Case) -> None:
    if case.dtype == "bfloat16" and rec.backend == "openvino":  # it runs opset-22 bfloat16 models
        raise ReproUnavailable(f"no standalone script for a bfloat16 model on {rec.backend} (NumPy has no bfloat16 "
                               "type); the record's translation shows the calls")
    reason = dtype_reason(case)
    if reason:
        raise ReproUnavailable(f"{rec.backend} does not run this case: {reason}")


def _ort(rec: Record) -> str:
    return ORT_RUNNER.format(provider=PROVIDERS[rec.device])


def _model_code(rec: Record, case: Case) -> str:
    """build_model(w, b) with the attributes the adapter derives from the case."""
    attrs, _ = node_attributes(case)
    return "\n" + build_model_source(rec.backend, case, attrs)


@register("onnxruntime")
def onnxruntime_template(rec: Record, case: Case) -> str:
    """The hand-built node in an InferenceSession."""
    _runnable(rec, case)
    _check(rec, "node = onnx.helper.make_node(" + repr("ConvTranspose" if case.transpose else "Conv"), epilogue_lines(case))
    return "import onnx\nimport onnxruntime as ort\nfrom onnx import helper, numpy_helper\n" + _ort(rec) + \
        _model_code(rec, case) + f'''

def run_framework(x, w, b):
    model = build_model(case_dtype(w), None if b is None else case_dtype(b))
    return run_onnx(model.SerializeToString(), x{_more(case)})
'''


@register("openvino")
def openvino_template(rec: Record, case: Case) -> str:
    """The hand-built node read and compiled by OpenVINO for CPU, every hint at its default."""
    _runnable(rec, case)
    _check(rec, "compiled = ov.Core().compile_model(", epilogue_lines(case))
    feeds = "".join(f", {n!r}: np.ascontiguousarray(NAMED[{n!r}].astype(DTYPE))" for n in residual_names(case))
    return "import onnx\nimport openvino as ov\nfrom onnx import helper, numpy_helper\n" + _model_code(rec, case) + f'''

def run_framework(x, w, b):
    """OpenVINO's CPU plugin at its default hints: its inference precision is printed (bf16 on AVX512_BF16/AMX)."""
    core = ov.Core()
    model = build_model(w.astype(DTYPE), None if b is None else b.astype(DTYPE))
    compiled = core.compile_model(core.read_model(model.SerializeToString()), "CPU")
    print("OpenVINO inference precision:", compiled.get_property("INFERENCE_PRECISION_HINT"))
    y = compiled({{"x": np.ascontiguousarray(x.astype(DTYPE)){feeds}}})[compiled.output(0)]
    return np.asarray(y).astype(np.float64), str(y.dtype)
'''


@register("torch-onnx-ort")
def torch_onnx_ort_template(rec: Record, case: Case) -> str:
    """The torch module of module_plan(), exported by torch.onnx.export (defaults), run by ONNX Runtime."""
    _runnable(rec, case)
    cls, args, pre_pad, crop, body, _ = module_plan(case)
    _check(rec, "forward: " + "; ".join(body), epilogue_lines_torch(case, constants(case)))
    model = model_class_source(case, "torch-onnx-ort", cls, args, pre_pad, crop)
    made, call = module_inputs(case)
    names = ["x", *residual_names(case)]
    return "import io\n\nimport onnxruntime as ort\nimport torch\nimport torch.nn.functional as F\n" + _ort(rec) + f'''

{model}

def run_framework(x, w, b):
    """Export with torch.onnx.export's defaults (the pinned torch's default exporter) into memory, then ORT."""
    def t(a):  # exact: the values are DTYPE values
        return torch.from_numpy(case_dtype(a))

    model = {made}.eval()
    f = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, ({call},), f, input_names={names!r}, output_names=["y"])
    return run_onnx(f.getvalue(), x{_more(case)})
'''


@register("tf2onnx-ort")
def tf2onnx_ort_template(rec: Record, case: Case) -> str:
    """The tensorflow backend's tf.nn calls in a tf.function (weights as constants), tf2onnx (defaults), ORT."""
    _runnable(rec, case)
    reason = TensorFlowBackend().supports(case, rec.device)
    if reason:
        raise ReproUnavailable(f"{rec.backend} does not run this case: {reason}")
    lines = nn_call(case, not case.channels_last).lines(case.bias)
    epilogue = Epilogue(case, constants(case)).tf_lines(not case.channels_last)
    _check(rec, next(ln for ln in lines if ln.startswith("y = tf.nn.conv")), epilogue)
    perm, _ = weight_transpose(case)
    made = assign(vector_names(case), "tf.constant({}, dtype=DTYPE)")  # inside the trace: graph constants
    body = textwrap.indent("\n".join([*made, *lines, *epilogue]), " " * 8)
    bias = "tf.constant(b_np)" if case.bias else "None"
    args = ", ".join(["x", *residual_names(case)])
    specs = "".join(f", tf.TensorSpec({list(case.output_shape)}, tf.{case.dtype}, name={n!r})" for n in residual_names(case))
    return ('import os\n\nos.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")\nimport onnxruntime as ort\n'
            'import tensorflow as tf\nimport tf2onnx\n') + _ort(rec) + f'''

def run_framework(x, w, b):
    """Convert in memory with tf2onnx.convert.from_function's defaults, then ONNX Runtime."""
    w_np = case_dtype(np.transpose(w, {perm}))  # canonical -> TF's filter layout
    b_np = None if b is None else case_dtype(b)

    @tf.function
    def fn({args}):
        w, b = tf.constant(w_np), {bias}
{body}
        return y

    spec = [tf.TensorSpec({list(case.input_shape)}, tf.{case.dtype}, name="x"){specs}]
    model, _ = tf2onnx.convert.from_function(fn, input_signature=spec)
    return run_onnx(model.SerializeToString(), x{_more(case)})
'''


@register("paddle2onnx-ort")
def paddle2onnx_ort_template(rec: Record, case: Case) -> str:
    """The paddle layer of layer_args() (wrapped with the epilogue as the adapter wraps it), exported by
    paddle.onnx.export (defaults) to a temporary directory, ORT."""
    _runnable(rec, case)
    cls, args = Paddle2OnnxOrtBackend().layer_args(case)
    lines = paddle2onnx_epilogue_lines(case, args["data_format"], constants(case))
    _check(rec, f"layer = paddle.nn.{cls}(" + kwargs_source(args) + ")", lines)
    bias = "\n    layer.bias.set_value(paddle.to_tensor(case_dtype(b)))" if case.bias else ""
    specs = "".join(f", paddle.static.InputSpec({list(case.output_shape)}, DTYPE, name={n!r})" for n in residual_names(case))
    functional = "import paddle.nn.functional as F\n" if case.epilogue else ""
    return "import os\nimport tempfile\n\nimport onnxruntime as ort\nimport paddle\n" + functional + _ort(rec) + f'''

def run_framework(x, w, b):
    """paddle.onnx.export (paddle2onnx at its defaults) into a temporary directory, then ONNX Runtime."""
    paddle.set_device("cpu")
    layer = paddle.nn.{cls}({kwargs_source(args)})
    layer.weight.set_value(paddle.to_tensor(case_dtype(w))){bias}{_paddle_wrap(case, lines[1:])}
    layer.eval()
    spec = [paddle.static.InputSpec({list(case.input_shape)}, DTYPE, name="x"){specs}]
    with tempfile.TemporaryDirectory() as tmp:
        paddle.onnx.export(layer, os.path.join(tmp, "model"), input_spec=spec)
        with open(os.path.join(tmp, "model.onnx"), "rb") as fh:
            model = fh.read()
    return run_onnx(model, x{_more(case)})
'''


def _paddle_wrap(case: Case, lines: list[str]) -> str:
    """paddle2onnx_ort.epilogue_layer as code: the conv, then the epilogue; its per-channel constants are
    buffers, its residuals forward(x, r0, ..., r3) arguments (to_static counts them: no *args)."""
    if not case.epilogue:
        return ""
    bind = [f"{n} = r{j}" for j, n in enumerate(residual_names(case))]
    body = textwrap.indent("\n".join([*bind, "y = self.conv(x)", *lines, "return y"]), " " * 12)
    return f'''

    class Epilogued(paddle.nn.Layer):
        """convdiff's wrapping layer: the conv, then the epilogue (per-channel constants are its buffers)."""

        def __init__(self, conv):
            super().__init__()
            self.conv = conv
            for name in {vector_names(case)!r}:
                self.register_buffer(name, paddle.to_tensor(case_dtype(NAMED[name])))

        def forward(self, x, r0=None, r1=None, r2=None, r3=None):
{body}

    layer = Epilogued(layer)'''
