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
from harness.model.case import op_is_transpose, op_rank
from reports.upstream.model import Outcome

# backend -> (product with {v}, variant): grouped per product in the table
LABELS: dict[str, tuple[str, str]] = {
    "torch": ("PyTorch {v}", "eager"), "torch-inductor": ("PyTorch {v}", "torch.compile"),
    "torch-ao-x86": ("PyTorch {v}", "quantized x86"), "torch-ao-fbgemm": ("PyTorch {v}", "quantized fbgemm"),
    "torch-ao-onednn": ("PyTorch {v}", "quantized onednn"), "torch-ao-qnnpack": ("PyTorch {v}", "quantized qnnpack"),
    "torch-pt2e": ("PyTorch {v}", "PT2E int8"), "torch-onnx-ort": ("{v}", ""),
    "tensorflow": ("TensorFlow {v}", "tf.nn"), "tensorflow-graph": ("TensorFlow {v}", "tf.function"),
    "tf-xla": ("TensorFlow {v}", "XLA"), "tensorflow-keras": ("Keras {v}", ""),
    "litert": ("LiteRT {v}", "XNNPACK"), "litert-ref": ("LiteRT {v}", "reference kernels"),
    "tf2onnx-ort": ("{v}", ""), "paddle2onnx-ort": ("{v}", ""),
    "paddle": ("Paddle {v}", "eager"), "paddle-output-size": ("Paddle {v}", "output_size"),
    "paddle-inference": ("Paddle Inference {v}", ""),
    "jax": ("JAX {v}", "eager"), "jax-jit": ("JAX {v}", "jit"),
    "tvm": ("TVM {v}", "Relax"), "tvm-bound": ("TVM {v}", "Relax with bound weights"),
    "tvm-onnx-import": ("TVM {v}", "ONNX import"), "tvm-onnx-import-output-shape": ("TVM {v}", "ONNX import with output_shape"),
    "tvm-tflite-import": ("TVM {v}", "TFLite import"), "tvm-torch-import": ("TVM {v}", "PyTorch import"),
    "onnxruntime": ("ONNX Runtime {v}", ""), "onnxruntime-qdq": ("ONNX Runtime {v}", "QDQ"),
    "openvino": ("OpenVINO {v}", ""), "onnx-reference": ("onnx.reference {v}", ""),
    "iree": ("IREE {v}", "from ONNX"), "iree-qlinear": ("IREE {v}", "QLinearConv"),
    "executorch": ("ExecuTorch {v}", "XNNPACK"), "executorch-portable": ("ExecuTorch {v}", "portable kernels"),
}
# Each variant is free of commas, so that a row's list of variants reads one way. A product's first backend
# here is its primary path: the one its bare name stands for in the body's table.
PRIMARY = frozenset(next(b for b, (p, _) in LABELS.items() if p == product) for product, _ in LABELS.values())
VERDICTS = {  # verdict -> its words in the table, in the table's order
    "right": "right values", "same-wrong": "the same wrong values", "other-wrong": "other wrong values",
    "accepts": "accepts the invalid input", "refuses": "refuses", "crashes": "crashes", "hangs": "hangs",
    "error": "fails",
}
_SPECS = {  # (forward, transposed): the text each op answers to, by the reported implementation's API
    "onnx": ("the ONNX {op} operator (https://onnx.ai/onnx/operators/onnx__{op}.html)",) * 2,
    "tf_same": ("TensorFlow's SAME/VALID rule (https://www.tensorflow.org/api_docs/python/tf/nn#notes_on_padding_2)",) * 2,
    "tf": ("tf.nn.convolution (https://www.tensorflow.org/api_docs/python/tf/nn/convolution)",
           "tf.nn.{lower} (https://www.tensorflow.org/api_docs/python/tf/nn/{lower})"),
    "paddle": ("paddle.nn.functional.{lower} (https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/nn/functional/{lower}_en.html)",) * 2,
    "jax": ("jax.lax.conv_general_dilated (https://docs.jax.dev/en/latest/_autosummary/jax.lax.conv_general_dilated.html)",
            "jax.lax.conv_transpose (https://docs.jax.dev/en/latest/_autosummary/jax.lax.conv_transpose.html)"),
    "torch": ("torch.nn.{torch} (https://docs.pytorch.org/docs/stable/generated/torch.nn.{torch}.html)",) * 2,
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
    """The spec the reported implementation answers to, for the op: the text a maintainer checks against, the
    transposed op's where the case is transposed, and the rank's page where the API has one per rank."""
    transpose, rank = op_is_transpose(op), op_rank(op)
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
    return _SPECS[key][transpose].format(op=onnx_op, torch=torch_name, lower=lower)


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


def _names(outcomes: list[Outcome], named: frozenset[str] = frozenset()) -> str:
    """The implementations of one row, each product once and without versions: 'PyTorch, JAX'. A product is
    named with this row's variants, 'PyTorch (eager, torch.compile)', where it is in `named` (`naming`), or
    where the row holds none of its primary path, whose name the bare product would read as ('IREE
    (QLinearConv)', not 'IREE', for IREE through ONNX QLinearConv)."""
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(unversioned(o.product), []).append(o)
    out = []
    for product, group in groups.items():
        variants = [o.variant for o in group if o.variant]
        plain = product not in named and any(o.backend in PRIMARY or not o.variant for o in group)
        out.append(product if plain or not variants else f"{product} ({', '.join(dict.fromkeys(variants))})")
    return ", ".join(out)


def naming(rows: list[list[Outcome]], reported: Outcome | None = None) -> frozenset[str]:
    """The products whose rows name their variants: those in more than one row (their variants differ), and
    the reported implementation's product where it is one variant of several (the others' row would otherwise
    read as the reported path itself)."""
    rows_of: dict[str, int] = {}
    for row in rows:
        for product in {unversioned(o.product) for o in row}:
            rows_of[product] = rows_of.get(product, 0) + 1
    named = {p for p, n in rows_of.items() if n > 1}
    if reported is not None and reported.variant:
        named.add(unversioned(reported.product))
    return frozenset(named)


ANOTHER = "another cause"  # the detail's tag for a result another root cause explains (details only)
MESSAGE_ROWS = 3  # a result given with more distinct messages than this is one row (the messages in the details)


def related(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes the body's table shows: those no other root cause explains."""
    return [o for o in outcomes if not o.detail.endswith(ANOTHER)]


def table(outcomes: list[Outcome], reported: Outcome | None = None) -> list[str]:
    """The body's table, one row per result: the implementations that give it (`_names`: a product's variants
    where they differ, where the reported implementation is another of them, or where the row lacks its primary
    path), with the message where the result has one (a refusal, a crash), products sharing a message
    in one row (one row in all where more than MESSAGE_ROWS messages differ: these are in the details' records,
    e.g. the dozen different refusals of an invalid input); what cannot be expressed or did not run is left to
    the details."""
    shown = [o for o in outcomes if o.verdict in VERDICTS]
    rows: list[tuple[list[Outcome], str]] = []
    for verdict, words in VERDICTS.items():
        by_detail: dict[str, list[Outcome]] = {}
        for o in shown:
            if o.verdict == verdict:
                by_detail.setdefault("" if verdict in ("right", "same-wrong", "accepts") else o.detail, []).append(o)
        if verdict in ("refuses", "crashes", "error") and len(by_detail) > MESSAGE_ROWS:
            rows.append(([o for group in by_detail.values() for o in group],
                         f"{words}, with {len(by_detail)} different messages (in the details)"))
            continue
        rows += [(chosen, words + (f": {detail}".replace("|", "/") if detail else ""))
                 for detail, chosen in by_detail.items()]
    named = naming([chosen for chosen, _ in rows], reported)
    out = [f"| {_names(chosen, named)} | {said} |" for chosen, said in rows]
    return ["| implementation | result |", "| --- | --- |", *out] if out else []


def _rows(outcomes: list[Outcome]) -> list[list[Outcome]]:
    """The outcomes the table shows, grouped as its rows are at least (one group per verdict)."""
    by: dict[str, list[Outcome]] = {}
    for o in outcomes:
        if o.verdict in VERDICTS:
            by.setdefault(o.verdict, []).append(o)
    return list(by.values())


def disagreement(reported: Outcome | None, outcomes: list[Outcome], spec: str) -> str:
    """A sentence where the implementations disagree among themselves or with the spec ('' where none do)."""
    wrong = [o for o in outcomes if o.verdict == "same-wrong"]
    right = [o for o in outcomes if o.verdict == "right"]
    if wrong and right:
        named = naming(_rows(outcomes), reported)
        return (f"The implementations disagree. The same values as the reported one: {_names(wrong, named)}; the values of "
                f"{spec}: {len(right)} other{'s' if len(right) > 1 else ''}.")
    if reported is not None and reported.verdict in ("same-wrong", "other-wrong") and right and \
            all(o.verdict == "right" for o in outcomes):
        return f"Every other implementation follows {spec}."
    if wrong and not right:
        return f"No implementation here follows {spec}."
    return ""
