"""'What other implementations do': the witness case's results on every installed implementation, classified
against the reported one's and rendered as a short table for the body (the full list goes to the details).

Each implementation is named as its users know it (PyTorch 2.13.0, ONNX Runtime 1.32.0), never by an
internal name. A result is: right values (within rounding of the float64 result of the op as the spec
defines it), the same wrong values as the reported implementation, other wrong values, a refusal (with its
message), an invalid input accepted, a crash, or not expressible in that implementation (details only).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from harness.execution.records import Record
from reports.upstream.model import Outcome

# backend -> (product with {v}, variant): grouped per product in the table
LABELS: dict[str, tuple[str, str]] = {
    "torch": ("PyTorch {v}", "eager"), "torch-inductor": ("PyTorch {v}", "torch.compile"),
    "torch-ao-x86": ("PyTorch {v}", "quantized, x86 engine"), "torch-ao-fbgemm": ("PyTorch {v}", "quantized, fbgemm"),
    "torch-ao-onednn": ("PyTorch {v}", "quantized, onednn"), "torch-ao-qnnpack": ("PyTorch {v}", "quantized, qnnpack"),
    "torch-pt2e": ("PyTorch {v}", "PT2E int8"), "torch-onnx-ort": ("{v}", ""),
    "tensorflow": ("TensorFlow {v}", "tf.nn"), "tensorflow-graph": ("TensorFlow {v}", "tf.function"),
    "tf-xla": ("TensorFlow {v}", "XLA"), "tensorflow-keras": ("Keras {v}", ""),
    "litert": ("LiteRT {v}", "XNNPACK"), "litert-ref": ("LiteRT {v}", "reference kernels"),
    "tf2onnx-ort": ("{v}", ""), "paddle2onnx-ort": ("{v}", ""),
    "paddle": ("Paddle {v}", "eager"), "paddle-output-size": ("Paddle {v}", "output_size"),
    "paddle-inference": ("Paddle Inference {v}", ""),
    "jax": ("JAX {v}", "eager"), "jax-jit": ("JAX {v}", "jit"),
    "tvm": ("TVM {v}", "Relax"), "tvm-bound": ("TVM {v}", "Relax, bound weights"),
    "tvm-onnx-import": ("TVM {v}", "ONNX import"), "tvm-onnx-import-output-shape": ("TVM {v}", "ONNX import, output_shape"),
    "tvm-tflite-import": ("TVM {v}", "TFLite import"), "tvm-torch-import": ("TVM {v}", "PyTorch import"),
    "onnxruntime": ("ONNX Runtime {v}", ""), "onnxruntime-qdq": ("ONNX Runtime {v}", "QDQ"),
    "openvino": ("OpenVINO {v}", ""), "onnx-reference": ("onnx.reference {v}", ""),
    "iree": ("IREE {v}", "from ONNX"), "iree-qlinear": ("IREE {v}", "QLinearConv"),
    "executorch": ("ExecuTorch {v}", "XNNPACK"), "executorch-portable": ("ExecuTorch {v}", "portable kernels"),
}
VERDICTS = {  # verdict -> its words in the table, in the table's order
    "right": "right values", "same-wrong": "the same wrong values", "other-wrong": "other wrong values",
    "accepts": "accepts the invalid input", "refuses": "refuses", "crashes": "crashes", "hangs": "hangs",
    "error": "fails",
}
_SPECS = {
    "onnx": "the ONNX {op} operator (https://onnx.ai/onnx/operators/onnx__{op}.html)",
    "tf_same": "TensorFlow's SAME/VALID rule (https://www.tensorflow.org/api_docs/python/tf/nn#notes_on_padding_2)",
    "tf": "tf.nn.convolution (https://www.tensorflow.org/api_docs/python/tf/nn/convolution)",
    "paddle": "paddle.nn.functional.{lower} (https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/nn/functional/{lower}_en.html)",
    "jax": "jax.lax.conv_general_dilated (https://docs.jax.dev/en/latest/_autosummary/jax.lax.conv_general_dilated.html)",
    "torch": "torch.nn.{torch} (https://docs.pytorch.org/docs/stable/generated/torch.nn.{torch}.html)",
}


def _short_version(backend: str, version: str) -> str:
    """The version a user knows: Keras' own and LiteRT's own, not the TensorFlow they run on."""
    if backend == "tensorflow-keras":
        m = re.search(r"keras ([\w.+-]+)", version)
        return m.group(1) if m else version
    if backend.startswith("litert"):
        return version.split(" (")[0]
    return re.sub(r"\s*\([^)]*\)", "", version)  # "tf2onnx 1.17.0 (tensorflow 2.21.0) + onnxruntime 1.32.0" -> its path


def label(backend: str, version: str) -> tuple[str, str]:
    """(product with its version, variant) of a backend, as its users name it."""
    product, variant = LABELS.get(backend, ("{v}", backend))
    return product.format(v=_short_version(backend, version)), variant


def spec_text(backend: str, op: str, padding: Any) -> str:
    """The spec the reported implementation answers to, for the op: the text a maintainer checks against."""
    transpose, rank = op.startswith("conv_transpose"), op[-2]
    onnx_op = "ConvTranspose" if transpose else "Conv"
    torch_name = f"ConvTranspose{rank}d" if transpose else f"Conv{rank}d"
    lower = f"conv{rank}d_transpose" if transpose else f"conv{rank}d"
    if re.search(r"onnx|openvino|iree", backend):
        key = "onnx"
    elif re.match(r"tensorflow|tf-|litert|tvm-tflite", backend):
        key = "tf_same" if padding in ("same", "valid") else "tf"
    elif backend.startswith("paddle"):
        key = "paddle"
    elif backend.startswith("jax"):
        key = "jax"
    else:
        key = "torch"
    return _SPECS[key].format(op=onnx_op, torch=torch_name, lower=lower)


def _first_line(message: str, words: int = 8) -> str:
    text = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    text = re.sub(r"^rejected as expected: ", "", text)
    parts = text.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None or a.shape != b.shape:
        return False
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    return bool(np.allclose(a, b, rtol=1e-3, atol=1e-3 * scale, equal_nan=True))


def outcome(rec: Record, array: np.ndarray | None, reported: np.ndarray | None, invalid: bool) -> Outcome:
    name, variant = label(rec.backend, rec.backend_version)
    status, message = rec.status, rec.message or ""
    if message.startswith("did not run:"):  # no result here (details only)
        return Outcome(rec.backend, name, variant, "not-run", message)
    if status == "unsupported":
        return Outcome(rec.backend, name, variant, "cannot-express", _first_line(message))
    if status == "crash":  # "worker killed by SIGABRT while running ...: <the framework's last words>"
        sig = re.search(r"\b(SIG[A-Z]+)\b", message)
        said = _first_line(message.split(": ", 1)[1]) if ": " in message else ""
        return Outcome(rec.backend, name, variant, "crashes", " ".join(p for p in (sig.group(1) if sig else "",
                                                                                   f"({said})" if said else "") if p))
    if status == "timeout":
        return Outcome(rec.backend, name, variant, "hangs")
    if status == "error":
        return Outcome(rec.backend, name, variant, "error", _first_line(message))
    if invalid:
        if status == "accepted_invalid":
            return Outcome(rec.backend, name, variant, "accepts", _first_line(message))
        return Outcome(rec.backend, name, variant, "refuses", _first_line(message))
    if status == "rejected":
        return Outcome(rec.backend, name, variant, "refuses", _first_line(message))
    if status == "pass":
        return Outcome(rec.backend, name, variant, "right")
    if status == "shape_mismatch":
        shape = "" if array is None else f"shape {tuple(array.shape)}"
        return Outcome(rec.backend, name, variant, "same-wrong" if _same(array, reported) else "other-wrong", shape)
    size = f"max error {rec.max_abs_err:.3g}" if rec.max_abs_err is not None else ""
    return Outcome(rec.backend, name, variant, "same-wrong" if _same(array, reported) else "other-wrong", size)


def classify(records: list[Record], arrays: dict[str, np.ndarray], reported: str,
             invalid: bool) -> tuple[Outcome | None, list[Outcome]]:
    """(the reported implementation's outcome, the others'), from the forward records of one case."""
    ref = arrays.get(reported)
    mine = next((r for r in records if r.backend == reported), None)
    reported_outcome = outcome(mine, ref, None, invalid) if mine is not None else None
    if reported_outcome is not None and reported_outcome.verdict == "other-wrong":
        reported_outcome.verdict = "same-wrong"  # itself
    others = [outcome(r, arrays.get(r.backend), ref if mine is not None and mine.status != "pass" else None, invalid)
              for r in records if r.backend != reported]
    return reported_outcome, others


def unversioned(product: str) -> str:
    """A product's name without its version numbers: 'tf2onnx 1.17.0 + onnxruntime 1.32.0' -> 'tf2onnx + onnxruntime'
    (the details give the versions)."""
    return re.sub(r"\s+v?\d[\w.+-]*", "", product)


def _names(outcomes: list[Outcome], split: frozenset[str] = frozenset()) -> str:
    """Products, each once and without versions: 'PyTorch, JAX'; a product in `split` (one whose variants
    differ) with the variants of this row: 'PyTorch (eager, torch.compile)'."""
    groups: dict[str, list[str]] = {}
    for o in outcomes:
        groups.setdefault(unversioned(o.product), []).append(o.variant)
    return ", ".join(p + (f" ({', '.join(v for v in vs if v)})" if p in split and any(vs) else "")
                     for p, vs in groups.items())


def _split(outcomes: list[Outcome]) -> frozenset[str]:
    """The products whose variants give different results (named with their variants)."""
    verdicts_of: dict[str, set[str]] = {}
    for o in outcomes:
        verdicts_of.setdefault(unversioned(o.product), set()).add(o.verdict)
    return frozenset(p for p, v in verdicts_of.items() if len(v) > 1)


ANOTHER = "another cause"  # the detail's tag for a result another root cause explains (details only)
MESSAGE_ROWS = 3  # a result given with more distinct messages than this is one row (the messages in the details)


def related(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes the body's table shows: those no other root cause explains."""
    return [o for o in outcomes if not o.detail.endswith(ANOTHER)]


def table(outcomes: list[Outcome]) -> list[str]:
    """The body's table, one row per result: the products that give it (variants only where a product's
    variants differ), with the message where the result has one (a refusal, a crash), products sharing a message
    in one row (one row in all where more than MESSAGE_ROWS messages differ: these are in the details' records,
    e.g. the dozen different refusals of an invalid input); what cannot be expressed or did not run is left to
    the details."""
    shown = [o for o in outcomes if o.verdict in VERDICTS]
    split = _split(shown)
    rows = ["| implementation | result |", "| --- | --- |"]
    for verdict, words in VERDICTS.items():
        by_detail: dict[str, list[Outcome]] = {}
        for o in shown:
            if o.verdict == verdict:
                by_detail.setdefault("" if verdict in ("right", "same-wrong", "accepts") else o.detail, []).append(o)
        if verdict in ("refuses", "crashes", "error") and len(by_detail) > MESSAGE_ROWS:
            chosen = [o for group in by_detail.values() for o in group]
            rows.append(f"| {_names(chosen, split)} | {words}, with {len(by_detail)} different messages (in the details) |")
            continue
        for detail, chosen in by_detail.items():
            said = f": {detail}".replace("|", "/") if detail else ""
            rows.append(f"| {_names(chosen, split)} | {words}{said} |")
    return rows if len(rows) > 2 else []


def disagreement(reported: Outcome | None, outcomes: list[Outcome], spec: str) -> str:
    """A sentence where the implementations disagree among themselves or with the spec ('' where none do)."""
    wrong = [o for o in outcomes if o.verdict == "same-wrong"]
    right = [o for o in outcomes if o.verdict == "right"]
    if wrong and right:
        return (f"The implementations disagree. The same values as the reported one: {_names(wrong, _split(outcomes))}; the values of "
                f"{spec}: {len(right)} other{'s' if len(right) > 1 else ''}.")
    if reported is not None and reported.verdict in ("same-wrong", "other-wrong") and right and \
            all(o.verdict == "right" for o in outcomes):
        return f"Every other implementation follows {spec}."
    if wrong and not right:
        return f"No implementation here follows {spec}."
    return ""
