"""Reproducer templates for TensorFlow's deployed paths (see reports/repro/script.py for the script around them):
`tensorflow-graph` and `tf-xla` (backends/tensorflow/graph.py), `litert` and `litert-ref` (backends/litert/interpreter.py).

Each traces the `tensorflow` backend's calls (backends/tensorflow/eager.nn_call, then the epilogue's
tf ops from backends/tensorflow/epilogue.py) into one fresh tf.function, the weight, the bias and the
epilogue's constants made inside the trace (graph constants, which Grappler, XLA or the TFLite
converter may fold and fuse), x and each residual its arguments:

- tensorflow-graph runs it with Grappler's default configuration, tf-xla with jit_compile=True; a
  channels_first case that TF refuses in NC* at run time is traced again in N*C with transposes
  around it (the record says which ran; a record without translation gets the adapter's retry);
- litert converts it (always N*C: TFLite convolutions are N*C only) with TFLiteConverter, builtin ops
  only (no TF Select), and runs the flatbuffer in the LiteRT interpreter: its default XNNPACK delegate
  (litert) or the reference kernels, OpResolverType.BUILTIN_REF (litert-ref).

The recorded translation must be the one the adapter writes now (bar its notes and the line listing
the converted model's ops), else ReproUnavailable: the adapter changed since the record was made.
"""

from __future__ import annotations

import textwrap

from backends.litert.interpreter import LiteRtBackend, LiteRtRefBackend
from backends.tensorflow.epilogue import Epilogue
from backends.tensorflow.graph import TensorFlowGraphBackend, TfXlaBackend
from backends.tensorflow.translate import in_nc_only, nn_call
from backends.tensorflow.util import NHWC_ONLY, weight_transpose
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.epilogue import assign, constants, residual_names, vector_names
from reports.repro.frameworks import tf_imports, tf_tf32
from reports.repro.registry import ReproUnavailable, register, stale


def _lines(case: Case, nc: bool) -> list[str]:
    """The tensorflow backend's call in NC* (nc) or N*C, then the epilogue's tf ops."""
    return [*nn_call(case, nc).lines(case.bias), *Epilogue(case, constants(case)).tf_lines(nc)]


def _code(rec: Record) -> list[str]:
    """The recorded translation's code lines (the adapter's notes dropped)."""
    return [ln for ln in rec.translation.splitlines() if not ln.startswith("# exact identity:")]


def _trace_source(case: Case, name: str, body: list[str]) -> str:
    """`def <name>(x, *residuals)`: the traced body, w, b and the epilogue's constants made inside it."""
    consts = ["w = tf.constant(w_tf, dtype=DTYPE)", *(["b = tf.constant(b_tf, dtype=DTYPE)"] if case.bias else []),
              *assign(vector_names(case), "tf.constant({}, dtype=DTYPE)")]
    code = textwrap.indent("\n".join([*consts, *body, "return y"]), " " * 4)
    return f"def {name}({', '.join(['x', *residual_names(case)])}):\n{code}"


@register("tensorflow-graph")
@register("tf-xla")
def tf_graph_template(rec: Record, case: Case) -> str:
    """One fresh tf.function (Grappler; jit_compile=True for tf-xla), retraced in N*C where TF refuses NC*."""
    backend = TfXlaBackend() if rec.backend == "tf-xla" else TensorFlowGraphBackend()
    reason = backend.supports(case, rec.device)
    if reason:
        raise ReproUnavailable(f"{rec.backend} does not run this case: {reason}")
    options = [_lines(case, False)] if case.channels_last else [_lines(case, True), in_nc_only(case.rank, _lines(case, False))]
    if rec.translation.strip():
        options = [body for body in options if _graph_translation(case, backend, body) == _code(rec)]
        if not options:
            raise stale(rec)
    perm, _ = weight_transpose(case)
    args = ", ".join(["tf.constant(x, dtype=DTYPE)", *(f"tf.constant(NAMED[{n!r}], dtype=DTYPE)" for n in residual_names(case))])
    jit = rec.backend == "tf-xla"
    traces = "\n\n".join(textwrap.indent(_trace_source(case, name, body), " " * 8)
                         for name, body in zip(("body", "body_nhwc"), options))
    if len(options) == 1:
        call = f"y = tf.function(body, jit_compile={jit}, autograph=False)({args})"
    else:
        call = "\n".join([
            "try:", f"    y = tf.function(body, jit_compile={jit}, autograph=False)({args})",
            "except Exception as exc:  # convdiff traces again in N*C only when TF says it runs N*C only",
            f"    if not re.search({NHWC_ONLY.pattern!r}, str(exc)):", "        raise",
            f"    y = tf.function(body_nhwc, jit_compile={jit}, autograph=False)({args})"])
    return tf_imports(call, keras=False) + f'''


def run_framework(x, w, b):
    """One fresh tf.function ({"jit_compile=True: XLA" if jit else "Grappler at its default configuration"}), traced as
    convdiff's {rec.backend} adapter traced it, on {rec.device}."""{tf_tf32(rec)}
    with tf.device("/GPU:0" if DEVICE == "cuda" else "/CPU:0"):
        w_tf, b_tf = np.transpose(w, {perm}), b  # canonical -> TF's filter layout

{traces}

{textwrap.indent(call, " " * 8)}
        return tf.cast(y, tf.float64).numpy(), y.dtype.name
'''


def _graph_translation(case: Case, backend: TensorFlowGraphBackend, body: list[str]) -> list[str]:
    """The translation backends/tensorflow/graph.py records for a trace whose body is `body`."""
    args = ", ".join(["x", *residual_names(case)])
    return [weight_transpose(case)[1], backend.decorator(), f"def f({args}):",
            f"    # {'w, b' if case.bias else 'w'} and the epilogue constants: tf.constant made inside the trace "
            "(graph constants)", *(f"    {ln}" for ln in body), "    return y", f"y = f({args})"]


@register("litert")
@register("litert-ref")
def litert_template(rec: Record, case: Case) -> str:
    """The TF function (N*C) -> TFLiteConverter (builtins only) -> the LiteRT interpreter (XNNPACK or reference)."""
    backend = LiteRtRefBackend() if rec.backend == "litert-ref" else LiteRtBackend()
    reason = backend.supports(case, rec.device)
    if reason:
        raise ReproUnavailable(f"{rec.backend} does not run this case: {reason}")
    body = _lines(case, False) if case.channels_last else in_nc_only(case.rank, _lines(case, False))
    now = backend.translation(case, {"lines": body, "notes": [], "ops": []}, "").splitlines()
    if rec.translation.strip() and [ln for ln in now if not ln.startswith("# ")] != \
            [ln for ln in _code(rec) if not ln.startswith("# ")]:  # "# <how>; TFLite ops: ..." aside
        raise stale(rec)
    perm, _ = weight_transpose(case)
    specs = ", ".join(f"tf.TensorSpec({shape}, tf.float32, name={n!r})" for n, shape in backend.signature(case))
    ref = rec.backend == "litert-ref"
    resolver = ", experimental_op_resolver_type=OpResolverType.BUILTIN_REF" if ref else ""
    feeds = "".join(f", {n!r}: NAMED[{n!r}]" for n in residual_names(case))
    return f'''import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # the converter
from ai_edge_litert.interpreter import Interpreter{", OpResolverType" if ref else ""}  # the runtime


def run_framework(x, w, b):
    """Trace, convert (builtin ops only) and run in the LiteRT interpreter ({
        "reference kernels, no delegate" if rec.backend == "litert-ref" else "its default XNNPACK delegate"})."""
    w_tf, b_tf = np.transpose(w, {perm}), b  # canonical -> TF's filter layout

{textwrap.indent(_trace_source(case, "body", body), " " * 4)}

    fn = tf.function(body, autograph=False)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function({specs})], fn)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]  # no TF Select (Flex)
    tflite_model = converter.convert()
    interpreter = Interpreter(model_content=tflite_model{resolver})
    interpreter.allocate_tensors()
    arrays = {{"x": x{feeds}}}
    for d in interpreter.get_input_details():
        interpreter.set_tensor(d["index"], np.ascontiguousarray(arrays[d["name"]].astype(np.float32)))
    interpreter.invoke()
    y = np.array(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]))
    return y.astype(np.float64), str(y.dtype)
'''
