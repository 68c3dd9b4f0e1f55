"""Reproducer templates for TensorFlow, Keras and Paddle (see reports/repro/script.py for the script around them).

The framework lines come from the adapters' own pure translation functions
(backends/tensorflow/eager.nn_call / layer_call, PaddleBackend.call_line), the same ones
that produce the record's `translation`, so a script cannot drift from what the
harness ran. When the record has a translation, the generated lines must match it
(else the adapter changed since the record was made: re-run the case). A rejected
record has none: TF channels_first scripts then retry in N*C exactly as the adapter does.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from backends.paddle import epilogue as paddle_epilogue
from backends.paddle.eager import PaddleBackend, PaddleOutputSizeBackend
from backends.tensorflow.epilogue import Epilogue
from backends.tensorflow.keras import layer_call
from backends.tensorflow.translate import in_nc_only, nn_call
from backends.tensorflow.util import NHWC_ONLY, weight_transpose
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.epilogue import assign, constants, residual_names, vector_names
from reports.repro.registry import register, stale

BUILD = re.compile(r"layer\.build\(\(.*?\)\);")  # Keras records the built shape literally; scripts use x.shape


def _recorded(rec: Record) -> list[str]:
    """The code lines of the record's translation (the adapter's notes dropped, Keras' shape normalized)."""
    lines = [ln for ln in rec.translation.splitlines() if not ln.startswith("# exact identity:")]
    return [BUILD.sub("layer.build(tuple(x.shape));", ln) for ln in lines]


def _tf_body(rec: Record, case: Case, plan: Callable[[bool], list[str]]) -> list[str]:
    """The TF lines for this record: N*C, native NC*, or (no record of which) NC* with the adapter's fallback."""
    pre = weight_transpose(case)[1]
    options = [plan(False)] if case.channels_last else [plan(True), in_nc_only(case.rank, plan(False))]
    if rec.translation.strip():
        for lines in options:
            if [pre, *lines] == _recorded(rec):
                return [pre, *lines]
        raise stale(rec)
    if len(options) == 1:
        return [pre, *options[0]]
    return [pre, "try:", *("    " + ln for ln in options[0]),
            "except Exception as exc:  # convdiff retries in N*C only when TF says it runs N*C only",
            f"    if not re.search({NHWC_ONLY.pattern!r}, str(exc)):", "        raise",
            *("    " + ln for ln in options[1])]


def tf_imports(code: str, keras: bool) -> str:
    """The imports of a TF (or Keras) script whose framework lines are `code`."""
    return "\n".join(["import os", *(["import re"] if "re.search(" in code else []), "",
                      'os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")',
                      *(['os.environ.setdefault("KERAS_BACKEND", "tensorflow")'] if keras else []),
                      "import tensorflow as tf", *(["import keras"] if keras else [])])


def tf_tf32(rec: Record) -> str:
    """The line that sets TF32 as the script's TF32 constant says (CUDA records only)."""
    return "\n    tf.config.experimental.enable_tensor_float_32_execution(TF32)" if rec.device == "cuda" else ""


def _tf_script(rec: Record, case: Case, body: list[str], keras: bool) -> str:
    """The TF part of the script: imports, tensors made as the adapter made them, the body, y back as float64."""
    code = textwrap.indent("\n".join([*tf_epilogue_tensors(case), *body]), " " * 8)
    tf32 = tf_tf32(rec)
    return tf_imports(code, keras) + f'''


def run_framework(x, w, b):
    """The calls convdiff's {rec.backend} adapter made, on {rec.device}."""{tf32}
    with tf.device("/GPU:0" if DEVICE == "cuda" else "/CPU:0"):
        x, w_canonical = tf.cast(x, DTYPE), tf.cast(w, DTYPE)  # exact: the values are DTYPE values
        b = None if b is None else tf.cast(b, DTYPE)
{code}
        return tf.cast(y, tf.float64).numpy(), y.dtype.name
'''


def _notes(rec: Record, notes: list[str]) -> list[str]:
    """The identities the adapter used, as it recorded them (its layout fallback too), else as it would."""
    if rec.translation.strip():
        return [ln for ln in rec.translation.splitlines() if ln.startswith("# exact identity:")]
    return [f"# exact identity: {n}" for n in notes]


@register("tensorflow")
def tensorflow_template(rec: Record, case: Case) -> str:
    """tf.nn calls from nn_call, the TensorFlowBackend's own decisions (then the epilogue's tf ops)."""
    epi = Epilogue(case, constants(case))
    body = _tf_body(rec, case, lambda nc: [*nn_call(case, nc).lines(case.bias), *epi.tf_lines(nc)])
    notes = _notes(rec, nn_call(case, not case.channels_last).notes)
    return _tf_script(rec, case, notes + body, keras=False)


@register("tensorflow-keras")
def keras_template(rec: Record, case: Case) -> str:
    """A Keras layer from layer_call, the KerasBackend's own decisions (then the epilogue's layers)."""
    epi = Epilogue(case, constants(case))
    body = _tf_body(rec, case, lambda nc: [*layer_call(case, nc).lines(case.bias, "tuple(x.shape)"), *epi.keras_lines(nc)])
    notes = _notes(rec, layer_call(case, not case.channels_last).notes)
    return _tf_script(rec, case, notes + body, keras=True)


def tf_epilogue_tensors(case: Case) -> list[str]:
    """The epilogue's per-channel constants and residuals as tensors in DTYPE, named as the adapter's lines
    name them (the scalars are literals in those lines)."""
    if not case.epilogue:
        return []
    return ["# the epilogue's constants and residuals (case layout), exact in DTYPE",
            *assign([*vector_names(case), *residual_names(case)], "tf.constant({}, dtype=DTYPE)")]


@register("paddle")
@register("paddle-output-size")
def paddle_template(rec: Record, case: Case) -> str:
    """The F.<op> call from PaddleBackend.call_line (output_padding or output_size by backend)."""
    call = paddle_call(rec, case)
    to_tensor, tf32 = paddle_tensor(case), paddle_tf32(rec)
    epilogue = textwrap.indent("\n".join(paddle_epilogue_code(rec, case)), " " * 8)
    return f'''
import paddle
import paddle.nn.functional as F


def run_framework(x, w, b):
    """The call convdiff's {rec.backend} adapter made, on {rec.device}."""
    paddle.set_device("gpu" if DEVICE == "cuda" else "cpu"){tf32}

    def t(a):  # exact: the values are DTYPE values
        return {to_tensor}

    x, w, b = t(x), t(w), None if b is None else t(b)
    with paddle.no_grad():
        {call}
{epilogue}
    return y.astype("float64").numpy(), str(y.dtype).removeprefix("paddle.")
'''


def paddle_epilogue_code(rec: Record, case: Case) -> list[str]:
    """The epilogue's tensors (t(): as the adapter made them) and its lines, checked against the record."""
    if not case.epilogue:
        return []
    data_format = PaddleBackend().translate(case)["data_format"]
    lines = paddle_epilogue.lines(case, data_format, constants(case))
    recorded = rec.translation.splitlines()
    if rec.translation.strip() and not all(ln in recorded for ln in lines):
        raise stale(rec)
    return ["# the epilogue's constants and residuals (case layout), exact in DTYPE",
            *assign([*vector_names(case), *residual_names(case)], "t({})"), *lines]


def paddle_call(rec: Record, case: Case) -> str:
    """The adapter's F.<op> line for this record (output_padding or output_size by backend), checked
    against the record's translation."""
    backend = PaddleOutputSizeBackend() if rec.backend == "paddle-output-size" else PaddleBackend()
    call = backend.call_line(case, case.bias)
    if rec.translation.strip() and call not in rec.translation.splitlines():
        raise stale(rec)
    return call


def paddle_tensor(case: Case) -> str:
    """The expression turning NumPy array `a` into a Paddle tensor exactly as the adapter does."""
    if case.dtype == "bfloat16":  # through float32, exact
        return 'paddle.to_tensor(a.astype(np.float32)).astype("bfloat16")'
    return "paddle.to_tensor(a.astype(DTYPE))"


def paddle_tf32(rec: Record) -> str:
    """The lines that set Paddle's TF32 flag as the script's TF32 constant says (CUDA records only)."""
    return ('\n    if "FLAGS_allow_tf32_cudnn" in paddle.base.core.globals().keys():  # as convdiff: where the build has it'
            '\n        paddle.set_flags({"FLAGS_allow_tf32_cudnn": TF32})') if rec.device == "cuda" else ""
