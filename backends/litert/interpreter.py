"""`litert` and `litert-ref`: a case as a TFLite model, the path a TF model takes to a phone.

The model is the `tensorflow` backend's translation traced into a tf.function (as
`tensorflow-graph` does: w, b and the epilogue constants made inside the trace, x and each
residual the function's arguments, concrete shapes), converted by
`tf.lite.TFLiteConverter.from_concrete_functions` with its default optimizations (it folds
and fuses: Conv2D + BiasAdd + Relu into one CONV_2D with a fused activation, batch-norm
and per-channel constants into the filter and bias) and with TF Select forbidden
(`supported_ops = [TFLITE_BUILTINS]`), so every result comes from TFLite's own kernels and
an op the converter cannot lower is a refusal, never a silent Flex fallback. The LiteRT
interpreter (`ai_edge_litert.interpreter.Interpreter`) runs it: `litert` with its default
XNNPACK delegate, `litert-ref` with `OpResolverType.BUILTIN_REF` (reference kernels, no
delegate). The `layout` relation also runs `litert` with `OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES`
(its kernel variant: TFLite's optimized builtin kernels, XNNPACK not applied) against its default. TFLite convolutions are N*C only: a channels_first case is transposed to N*C
around the op (the tensorflow backend's own fallback, an exact permutation, in the notes).

What TFLite cannot state (checked against TF 2.21's converter): float64, float16 and bfloat16
convolutions (no such CONV_2D/CONV_3D/TRANSPOSE_CONV kernels; the converter needs TF Select),
dilated 1-D/2-D transposed convolutions (TRANSPOSE_CONV has no dilation; CONV_3D_TRANSPOSE
has), and what tf.nn itself cannot state (grouped conv3d / conv3d_transpose).

The flatbuffer, the function's code lines and its TFLite op list are cached per case under
`$CONVDIFF_CACHE/litert/` (default `.convdiff-cache/litert/`; `CONVDIFF_CACHE=off` disables;
`CONVDIFF_CACHE_WRITE=second` stores a key on its second sighting), keyed by the case
parameters, the digest of the constants baked into the model (w, b, epilogue constants),
the TensorFlow and ai-edge-litert versions and the source of the modules that write the
function. A converter refusal is cached too (`<key>.failed`). `litert` and `litert-ref`
share the entries, and a warm run never imports TensorFlow.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import re
from typing import Any

import numpy as np

from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported, first_line
from backends.litert import quant as litert_quant
from backends.tensorflow.epilogue import TF_EPILOGUE_OPS, Epilogue, residual_names
from backends.tensorflow.util import NODE_PREFIX, TF_EXCLUDES, tf_filter, weight_transpose
from harness.model.case import Case
from harness.numerics.inputs import Inputs

FORMAT = 1  # bump when the cached artefacts or the key's meaning change
SOURCES = ("litert/interpreter.py", "litert/quant.py", "tensorflow/eager.py", "tensorflow/epilogue.py", "tensorflow/util.py")  # what writes the function
ERROR_LINE = re.compile(r"error: (.*)")
FLEX_OPS = re.compile(r"TF Select ops: ([^\n]*)")
TF_OPS = {"conv1d": "Conv2D", "conv2d": "Conv2D", "conv3d": "Conv3D", "conv_transpose1d": "Conv2DBackpropInput",
          "conv_transpose2d": "Conv2DBackpropInput", "conv_transpose3d": "Conv3DBackpropInputV2"}  # what tf.nn emits
BUILTIN = "BUILTIN_WITHOUT_DEFAULT_DELEGATES"  # litert's kernel variant: TFLite's builtin kernels, XNNPACK not applied
LOCATION = re.compile(r"(loc\(.*?\):\s*|\S+\.py:\d+:\d+:\s*)")


def _dist_version(*names: str) -> str:
    for name in names:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            continue
    return "unknown"


def converter_message(exc: BaseException) -> str:
    """The converter's refusal in one stable line: its first MLIR error without source locations
    (which name this machine's paths), plus the ops it would have left to TF Select."""
    text = str(exc)
    errors = [LOCATION.sub("", m.group(1)).strip() for m in ERROR_LINE.finditer(text)]
    errors = [e for e in errors if e and not e.startswith("failed while converting")]
    flex = FLEX_OPS.search(text)
    if not errors:
        return NODE_PREFIX.sub("", first_line(exc))
    more = f" (TF Select ops: {flex.group(1).strip()})" if flex else ""
    return f"{type(exc).__name__}: {errors[0]}{more}"


def source_digest() -> str:
    return sources_digest(SOURCES)


class LiteRtBackend(Backend):
    """TF function -> TFLiteConverter (builtins only) -> LiteRT interpreter with XNNPACK (default)."""
    preload = ("tensorflow", "ai_edge_litert")  # the TFLite converter (imported before the fork)
    excludes = TF_EXCLUDES
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "litert"
    framework = "ai_edge_litert"
    distribution = "ai-edge-litert"
    devices = ("cpu",)
    epilogue_ops = TF_EPILOGUE_OPS
    quantized = "a fully int8 TFLite model: full-integer quantization, the case's scales pinned (litert_quant.py)"
    resolver = "AUTO"  # OpResolverType: AUTO = builtin kernels + the default XNNPACK delegate
    interpreter_line = "interpreter = Interpreter(model_content=tflite_model)  # default: XNNPACK delegate"
    capabilities = Capabilities(
        padding=("same", "valid", "explicit pairs (conv2d: PAD + CONV_2D; conv2d_transpose: as tf.nn writes it, "
                 "which the converter refuses)"),
        padding_identities=("conv1d/3d pairs: tf.pad then VALID",
                            "conv_transpose1d/3d pairs: VALID with output_shape, then crop"),
        output_padding="via output_shape",
        dilation="conv (CONV_2D, CONV_3D), transpose3d (CONV_3D_TRANSPOSE); transpose1d/2d: none "
                 "(TRANSPOSE_CONV has no dilation)",
        groups="conv1d/2d (CONV_2D with filter I/g); transpose1d/2d: converted, refused by TRANSPOSE_CONV at run "
               "time; conv3d, transpose3d: none (tf.nn has no groups)",
        layouts=("channels_last", "channels_first (transposed to N*C around the op: TFLite convolutions are N*C)"),
        dtypes=("float32", "uint8, int8 (a fully int8 model, uint8 via QUANTIZE at its edges; conv3d, transpose3d: "
                "none, TFLite has no int8 CONV_3D kernels)"),
        devices=("cpu",),
        gradients="none",
    )

    def version(self) -> str:
        return f"{_dist_version('ai-edge-litert')} (converter: tensorflow {self.tf_version()})"

    @staticmethod
    def tf_version() -> str:
        return _dist_version("tensorflow", "tensorflow-cpu")

    def unavailable_reason(self) -> str | None:
        for module, dist in (("ai_edge_litert", "ai-edge-litert"), ("tensorflow", "tensorflow")):
            if importlib.util.find_spec(module) is None:
                return f"{dist} is not installed (pip install 'convdiff[litert]')"
        return None

    def setup(self, device: str) -> None:
        from ai_edge_litert import interpreter

        self.litert = interpreter
        self.tfb: Any = None  # TensorFlowBackend, made on the first cache miss (TF is imported then)
        self.cache = ArtifactCache("litert")  # backends/artifacts.py: flatbuffer + meta, or the refusal
        self.sources = source_digest()

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": _dist_version("ai-edge-litert"), "tensorflow": self.tf_version(),
                "op_resolver": self.resolver, "threads": "1 (Interpreter default)"}

    def supports(self, case: Case, device: str) -> str | None:
        from backends.tensorflow.eager import TensorFlowBackend

        if case.dtype in ("float64", "float16"):
            more = ("; a TFLite float16 model means float16 weights dequantized to float32, not a float16 "
                    "convolution") if case.dtype == "float16" else ""
            return (f"TFLite has no {case.dtype} convolution kernels: TFLiteConverter leaves a {case.dtype} "
                    f"tf.{TF_OPS[case.op]} to TF Select ('op is neither a custom op nor a flex op'){more}")
        if case.dtype == "bfloat16":
            return "TFLiteConverter: Unsupported TensorFlow type bfloat16 provided for the input type of the model"
        if case.transpose and case.rank < 3 and any(d > 1 for d in case.dilation):
            return ("TFLite TRANSPOSE_CONV has no dilation: the converter leaves a dilated "
                    "tf.Conv2DBackpropInput to TF Select (CONV_3D_TRANSPOSE has dilation)")
        return (case.quantized and litert_quant.quant_reason(case)) or TensorFlowBackend().supports(case, device)

    # --- the model -------------------------------------------------------------------------
    def key(self, case: Case, inputs: Inputs) -> str:
        quant = litert_quant.salt(inputs.quant) if inputs.quant is not None else {}
        return case_key(case, inputs, {**quant, "format": FORMAT, "tensorflow": self.tf_version(),
                                       "litert": _dist_version("ai-edge-litert"), "sources": self.sources})

    def signature(self, case: Case) -> list[tuple[str, list[int]]]:
        """The function's arguments (name, shape): x, then one per residual (y's shape, case layout)."""
        names = residual_names(case)
        return [("x", list(case.input_shape)), *((n, list(case.output_shape)) for n in names)]

    def trace(self, case: Case, inputs: Inputs, dtype: str) -> tuple[Any, Any, dict[str, Any]]:
        """The case's TF function traced with `dtype` arguments: (concrete function, the tf.function,
        the record of its code lines and notes that the trace fills)."""
        from backends.tensorflow.eager import TensorFlowBackend
        from backends.tensorflow.translate import in_nc_only, layout_perms

        if self.tfb is None:
            self.tfb = TensorFlowBackend()
            self.tfb.setup("cpu")
        tf = self.tfb.tf
        w_np, _ = tf_filter(case, inputs.w)
        names = residual_names(case)
        record: dict[str, Any] = {}
        to_last, back = layout_perms(case.rank)

        def body(x: Any, *res: Any) -> Any:
            w = tf.constant(w_np)
            b = None if inputs.b is None else tf.constant(inputs.b)
            epi = Epilogue(case, inputs.epilogue, dict(zip(names, res))) if case.epilogue else None
            if case.channels_last:
                y, lines, notes = self.tfb.call(case, x, w, b, nc=False, epi=epi)
            else:  # TFLite is N*C: the tensorflow backend's channels_last fallback
                y, lines, notes = self.tfb.call(case, tf.transpose(x, to_last), w, b, nc=False, epi=epi)
                y = tf.transpose(y, back)
                lines = in_nc_only(case.rank, lines)
                notes = [f"channels_first: TFLite convolutions are N*C only; data transposed to N*C "
                         f"around the op ({to_last} and back)", *notes]
            record.update(lines=lines, notes=notes)
            return y

        fn = tf.function(body, autograph=False)
        # an invalid float case's x in its own dtype (a quantized one traces its float model, in `dtype`)
        x_dtype = case.tensor_dtypes[0] if case.geometry is None and not case.quantized else dtype
        specs = [tf.TensorSpec(shape, getattr(tf, x_dtype if n == "x" else dtype), name=n)
                 for n, shape in self.signature(case)]
        return fn.get_concrete_function(*specs), fn, record

    def convert(self, case: Case, inputs: Inputs) -> tuple[bytes, dict[str, Any]]:
        """Trace the TF function and convert it: (flatbuffer, meta: code lines, notes, ops)."""
        if case.quantized:
            model, meta = litert_quant.convert(self, case, inputs)
            return model, {**meta, "ops": model_ops(model)}
        concrete, fn, record = self.trace(case, inputs, case.dtype)
        converter = self.tfb.tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn)
        converter.target_spec.supported_ops = [self.tfb.tf.lite.OpsSet.TFLITE_BUILTINS]  # no TF Select (Flex)
        model = converter.convert()
        return model, {"lines": record["lines"], "notes": record["notes"], "ops": model_ops(model)}

    def model(self, case: Case, inputs: Inputs) -> tuple[bytes, dict[str, Any], str]:
        """The flatbuffer from the cache or the converter: (model, meta, how)."""
        def build() -> dict[str, bytes]:
            model, meta = self.convert(case, inputs)
            return {"model.tflite": model, "meta.json": json.dumps(meta).encode()}

        def refusal(exc: Exception) -> str:
            if isinstance(exc, Rejected | Unsupported):  # the adapter's own answer: not cached, raised as it is
                raise exc
            return converter_message(exc)  # tracing or conversion failed: a finding

        files, how = self.cache.fetch(self.key(case, inputs), build, refusal)
        if isinstance(files, str):
            raise Rejected(files)
        return files["model.tflite"], json.loads(files["meta.json"]), "converted" if how == "built" else how

    threads: int | None = None  # set_threads: Interpreter(num_threads=...), XNNPACK's threadpool (default 1)

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return self.threads or 1

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        return (KernelVariant(BUILTIN, f"Interpreter(experimental_op_resolver_type=OpResolverType.{BUILTIN}): "
                              "TFLite's own optimized kernels, without the default XNNPACK delegate"),)

    def use_kernel_variant(self, name: str) -> None:
        if name != BUILTIN:
            super().use_kernel_variant(name)
        self.resolver = name
        self.interpreter_line = (f"interpreter = Interpreter(model_content=tflite_model, experimental_op_resolver_type="
                                 f"OpResolverType.{name})  # TFLite's builtin kernels, no XNNPACK delegate")

    def interpreter(self, model: bytes) -> Any:
        options: dict[str, Any] = {"num_threads": self.threads} if self.threads else {}
        if self.resolver != "AUTO":
            options["experimental_op_resolver_type"] = getattr(self.litert.OpResolverType, self.resolver)
        return self.litert.Interpreter(model_content=model, **options)

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        model, meta, how = self.model(case, inputs)
        residuals = [c["r"] for op, c in zip(case.epilogue, inputs.epilogue) if op == "residual"]
        arrays = {"x": inputs.x, **dict(zip(residual_names(case), residuals))}
        try:
            it = self.interpreter(model)
            it.allocate_tensors()
            for d in it.get_input_details():
                it.set_tensor(d["index"], np.ascontiguousarray(arrays[d["name"]]))
            it.invoke()
            y = np.array(it.get_tensor(it.get_output_details()[0]["index"]))
        except Exception as exc:  # noqa: BLE001 - the interpreter refused a valid model: a finding
            raise Rejected(first_line(exc)) from None
        out = Output(np.ascontiguousarray(y), y.dtype.name, self.translation(case, meta, how), notes=meta["notes"])
        if case.quantized:  # which kernel requantized: the delegate's or TFLite's own
            out.quant_rounding = litert_quant.ROUNDING["delegate" if litert_quant.delegated(it) else "builtin"]
            out.notes = [*out.notes, f"requantization: {litert_quant.REQUANT[out.quant_rounding]}"]
        return out

    def translation(self, case: Case, meta: dict[str, Any], how: str) -> str:
        sig = self.signature(case)
        _, w_line = weight_transpose(case)
        dtype = "float32" if case.quantized else case.dtype  # quantized: the float function, then quantized
        specs = ", ".join(f"tf.TensorSpec({shape}, tf.{dtype}, name={n!r})" for n, shape in sig)
        feed = "; ".join(f"interpreter.set_tensor(<{n}>, {n})" for n, _ in sig)
        return "\n".join([
            w_line.replace("w = tf.transpose(", "w = tf.constant(np.transpose(").replace(")  #", "))  #"),
            "@tf.function  # w, b and the epilogue constants: tf.constant inside the trace",
            f"def f({', '.join(n for n, _ in sig)}):", *(f"    {ln}" for ln in meta["lines"]), "    return y",
            f"converter = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function({specs})], f)",
            *(litert_quant.translation_lines(case) if case.quantized else [
                "converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]  # no TF Select (Flex)",
                "tflite_model = converter.convert()"]),
            f"# {how}; TFLite ops: {', '.join(meta['ops'])}",
            self.interpreter_line,
            f"interpreter.allocate_tensors(); {feed}; interpreter.invoke()",
            "y = interpreter.get_tensor(interpreter.get_output_details()[0]['index'])",
        ])


def model_ops(model: bytes) -> list[str]:
    """The flatbuffer's operators in order, with a fused activation where the converter fused one."""
    from tensorflow.lite.python import schema_py_generated as schema

    codes = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    acts = {v: k for k, v in vars(schema.ActivationFunctionType).items() if not k.startswith("_")}
    m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(model, 0))
    out = []
    for op in m.subgraphs[0].operators:
        code = m.operatorCodes[op.opcodeIndex]
        name = codes.get(max(code.builtinCode, code.deprecatedBuiltinCode), str(code.builtinCode))
        if name == "CUSTOM":
            name = f"CUSTOM:{code.customCode!r}"
        fused = getattr(op.builtinOptions, "fusedActivationFunction", 0)
        out.append(f"{name}(fused {acts.get(fused, fused)})" if fused else name)
    return out


class LiteRtRefBackend(LiteRtBackend):
    """The same flatbuffer on TFLite's reference kernels (OpResolverType.BUILTIN_REF, no delegate)."""

    name = "litert-ref"
    resolver = "BUILTIN_REF"
    interpreter_line = ("interpreter = Interpreter(model_content=tflite_model, "
                        "experimental_op_resolver_type=OpResolverType.BUILTIN_REF)  # reference kernels, no delegate")

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        raise Unsupported("litert-ref runs TFLite's reference kernels (BUILTIN_REF); the optimized builtin kernels "
                          f"are litert's kernel variant ({BUILTIN})")

    def interpreter(self, model: bytes) -> Any:
        return self.litert.Interpreter(model_content=model, num_threads=self.threads or 1,
                                       experimental_op_resolver_type=self.litert.OpResolverType.BUILTIN_REF)
