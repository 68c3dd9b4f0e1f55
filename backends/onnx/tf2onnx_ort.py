"""tf2onnx -> ONNX Runtime: a TensorFlow function converted to ONNX, the path TF models take to deployment.

The function makes exactly the tf.nn calls the `tensorflow` backend makes (its NnCall
translation: SAME/VALID, conv2d explicit pairs, output_shape, tf.pad/crop identities,
tf.nn.bias_add), with the case's weights as graph constants in TF's filter layouts. The
data stay in the case layout: channels_first is passed as TF's NC* data_format (tf2onnx
converts the graph without running it, so TF's CPU kernels' N*C-only limits do not
apply). An epilogue follows in tf ops, as the `tensorflow` backend writes it
(backends/tensorflow/epilogue.py: constants made inside the trace, each residual a function argument,
so a graph input of the model). `tf2onnx.convert.from_function` converts it in memory at its
default opset (tf2onnx spells tf.nn.gelu with Erf, and its optimizer may fold the constant
ops into the Conv); ONNX Runtime runs the model. Only tensorflow, tf2onnx, onnx and onnxruntime are imported in
the worker.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Capabilities, Output, Rejected, first_line
from backends.onnx.model import residual_arrays, residual_inputs
from backends.onnx.onnxruntime_backend import OrtBase
from backends.onnx.torch_onnx_ort import exported_by
from backends.tensorflow.eager import TensorFlowBackend
from backends.tensorflow.epilogue import TF_EPILOGUE_OPS, Epilogue
from backends.tensorflow.util import NODE_PREFIX, TF_EXCLUDES, tf_filter, weight_transpose
from harness.model.case import Case
from harness.numerics.inputs import Inputs

SOURCES = ("onnx/tf2onnx_ort.py", "tensorflow/eager.py", "tensorflow/epilogue.py", "tensorflow/util.py")  # what writes the function

class Tf2OnnxOrtBackend(OrtBase):
    """tf.function of tf.nn conv ops -> tf2onnx.convert.from_function (default opset) -> onnxruntime."""
    preload = ("tensorflow", "onnxruntime", "onnx", "tf2onnx")  # the traced graph and its converter (imported before the fork)
    excludes = TF_EXCLUDES
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "tf2onnx-ort"
    runtime_name = "tf2onnx-ort"
    epilogue_ops = TF_EPILOGUE_OPS
    capabilities = Capabilities(
        padding=("same", "valid", "explicit pairs (conv2d, conv2d_transpose)"),
        padding_identities=("conv1d/3d pairs: tf.pad then VALID",
                            "conv_transpose1d/3d pairs: VALID with output_shape, then crop"),
        output_padding="via output_shape",
        groups="conv1d/2d (filter I/g), transpose1d/2d (filter O/g, as tensorflow); conv3d, transpose3d: none",
        layouts=("channels_last", "channels_first (NC* data_format)"),
        dtypes=("float32", "float16 (CPU: float32 between Casts ORT inserts)", "float64: where the provider registers it (CPU: no)"),
    )

    def converter_modules(self) -> tuple[tuple[str, str], ...]:
        return (("tensorflow", "tensorflow"), ("tf2onnx", "converters"))

    def setup(self, device: str) -> None:
        super().setup(device)
        self.tfb = TensorFlowBackend()
        self.tfb.setup("cpu")  # TF only traces the function here; ONNX Runtime runs it on `device`
        self.tf = self.tfb.tf
        import tf2onnx

        logging.getLogger("tf2onnx").setLevel(logging.ERROR)
        self.tf2onnx = tf2onnx
        self.cache = ArtifactCache("tf2onnx")  # backends/artifacts.py: a warm run converts nothing
        # the traced graph may differ with TF's oneDNN rewrites on: the live state is part of the key
        self.salt = {"tensorflow": self.tf.__version__, "tf2onnx": tf2onnx.__version__, "sources": sources_digest(SOURCES),
                     "tf_onednn": self.tfb.host_facts("cpu").get("tf_onednn")}

    def version(self) -> str:
        import importlib.metadata as md

        try:
            return f"tf2onnx {md.version('tf2onnx')} (tensorflow {self.tf_version()}) + onnxruntime {md.version('onnxruntime')}"
        except md.PackageNotFoundError:
            return "unknown"

    def tf_version(self) -> str:
        return TensorFlowBackend().version()

    def fingerprint(self, device: str) -> dict[str, str]:
        return {**super().fingerprint(device), "tensorflow": self.tf.__version__,
                "tf2onnx": self.tf2onnx.__version__}

    def supports(self, case: Case, device: str) -> str | None:
        return self.tfb.supports(case, device) or self.runtime_reason(case, device)

    def convert(self, case: Case, inputs: Inputs, nc: bool) -> tuple[bytes, list[str], list[str]]:
        """The TF function converted to a serialized ONNX model; the function's lines and notes."""
        tf = self.tf
        w_tf, _ = tf_filter(case, inputs.w)
        record: dict[str, Any] = {}

        @tf.function(autograph=False)  # straight-line body: the same graph, no converted source left in /tmp
        def fn(x: Any, *residuals: Any) -> Any:
            w = tf.constant(w_tf)
            b = None if inputs.b is None else tf.constant(inputs.b)
            epi = Epilogue(case, inputs.epilogue, dict(zip(residual_inputs(case), residuals))) if case.epilogue else None
            y, lines, notes = self.tfb.call(case, x, w, b, nc=nc, epi=epi)
            record.update(lines=lines, notes=notes)
            return y

        # x in its own dtype (an invalid case may state another), the residuals in the case's
        spec = [tf.TensorSpec(shape, getattr(tf, case.tensor_dtypes[0] if n == "x" else case.dtype), name=n)
                for n, shape in self.signature(case)]
        model, _ = self.tf2onnx.convert.from_function(fn, input_signature=spec)
        return model.SerializeToString(), record["lines"], record["notes"]

    @staticmethod
    def signature(case: Case) -> list[tuple[str, list[int]]]:
        """The function's arguments (name, shape): x, then one per residual (y's shape, case layout)."""
        return [("x", list(case.input_shape)), *((n, list(case.output_shape)) for n in residual_inputs(case))]

    def converted(self, case: Case, inputs: Inputs) -> tuple[bytes, list[str], list[str]]:
        """convert(), through the per-case cache; a refusal (tracing or conversion failed) is Rejected."""
        def build() -> dict[str, bytes]:
            model, body, notes = self.convert(case, inputs, not case.channels_last)
            return {"model.onnx": model, "meta.json": json.dumps({"lines": body, "notes": notes}).encode()}

        files, _ = self.cache.fetch(case_key(case, inputs, self.salt), build,
                                    lambda exc: NODE_PREFIX.sub("", first_line(exc)))
        if isinstance(files, str):
            raise Rejected(files)
        meta = json.loads(files["meta.json"])
        return files["model.onnx"], meta["lines"], meta["notes"]

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        model, body, notes = self.converted(case, inputs)
        _, w_line = weight_transpose(case)
        sig = self.signature(case)
        specs = ", ".join(f"tf.TensorSpec({shape}, tf.{case.dtype}, name={n!r})" for n, shape in sig)
        lines = [w_line.replace("w = tf.transpose(", "w = tf.constant(np.transpose(").replace(")  #", "))  #"),
                 f"@tf.function  def fn({', '.join(n for n, _ in sig)}):", *(f"    {ln}" for ln in body),
                 f"model, _ = tf2onnx.convert.from_function(fn, input_signature=[{specs}])  # {exported_by(model)}",
                 self.session_line(device), "y = sess.run(None, {" + ", ".join(f"{n!r}: {n}" for n, _ in sig) + "})[0]"]
        arr, dtype = self.run_model(model, inputs.x, device, residual_arrays(case, inputs))
        return Output(arr, dtype, "\n".join(lines), notes=notes)
