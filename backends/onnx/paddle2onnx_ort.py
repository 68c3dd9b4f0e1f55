"""paddle2onnx -> ONNX Runtime: a Paddle layer exported to ONNX, the path Paddle models take to deployment.

A paddle.nn.Conv{1,2,3}D / Conv{1,2,3}DTranspose layer holding the case's weights, with
the arguments the `paddle` backend passes to the functional ops (every padding form
native, SAME/VALID as Paddle's own, output_padding, data_format for both layouts), is
exported by `paddle.onnx.export` (paddle2onnx, at its defaults) into a temporary
directory that is removed afterwards, and the model is run by ONNX Runtime. An epilogue
follows the conv in a wrapping paddle.nn.Layer, in paddle ops as a Paddle user writes them
(backends/paddle/epilogue.py): per-channel constants are the layer's buffers (exported as initializers),
scalars Python floats, each residual a forward() argument (a graph input). Only paddle,
paddle2onnx, onnx and onnxruntime are imported in the worker.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
import warnings
from typing import Any

import numpy as np

from backends.artifacts import ArtifactCache, case_key, sources_digest
from backends.base import Capabilities, Output, Rejected, first_line
from backends.onnx.model import residual_arrays, residual_inputs
from backends.onnx.onnxruntime_backend import OrtBase
from backends.onnx.torch_onnx_ort import exported_by
from backends.paddle import epilogue as paddle_epilogue
from backends.paddle.eager import PADDLE_CAPS, PaddleBackend
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.inputs import Inputs

LAYERS = {"conv": "Conv{r}D", "conv_transpose": "Conv{r}DTranspose"}
TMP_PREFIX = "convdiff-paddle2onnx-"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
MAX_RESIDUALS = 4  # the wrapping layer's forward(x, r0, ..., r3)
SOURCES = ("onnx/paddle2onnx_ort.py", "paddle/eager.py", "paddle/epilogue.py")  # what writes the layer


def remove_stale_dirs() -> None:
    """Remove the temporary directories of workers that died mid-export (paddle2onnx aborts on some models)."""
    import shutil

    for entry in os.scandir(tempfile.gettempdir()):
        pid = entry.name.removeprefix(TMP_PREFIX).split("-", 1)[0]
        if entry.name.startswith(TMP_PREFIX) and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(entry.path, ignore_errors=True)


class Paddle2OnnxOrtBackend(OrtBase):
    """paddle.nn conv layer -> paddle.onnx.export (paddle2onnx, default opset) -> onnxruntime."""
    # as run() meets them, imported before the fork, and in an order that extends paddle's template
    # (harness/execution/preloads.py): its worker is a fork of paddle's, which imports no torch either
    preload = ("paddle", "onnxruntime", "paddle2onnx", "onnx")
    excludes = PaddleBackend.excludes
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "paddle2onnx-ort"
    runtime_name = "paddle2onnx-ort"
    epilogue_ops = EPILOGUE_OPS
    capabilities = Capabilities(
        padding=PADDLE_CAPS["padding"],
        dtypes=("float32", "float16 (CPU: float32 between Casts ORT inserts; Paddle must build it: no CPU kernel)",
                "float64: where the provider registers it (CPU: no)"),
    )

    def converter_modules(self) -> tuple[tuple[str, str], ...]:
        return (("paddle", "paddle"), ("paddle2onnx", "converters"))

    def setup(self, device: str) -> None:
        super().setup(device)
        self.pdb = PaddleBackend()
        self.pdb.setup("cpu")  # Paddle only builds and exports the layer; ONNX Runtime runs it on `device`
        self.paddle = self.pdb.paddle
        remove_stale_dirs()
        import paddle2onnx

        self.converter_version = str(paddle2onnx.__version__)
        self.cache = ArtifactCache("paddle2onnx")  # backends/artifacts.py: a warm run exports nothing
        self.exited = False  # an export ended in paddle2onnx's sys.exit: this process is not to be trusted again
        self.salt = {"paddle": self.paddle.__version__, "paddle2onnx": self.converter_version,
                     "sources": sources_digest(SOURCES)}

    def version(self) -> str:
        import importlib.metadata as md

        try:
            return (f"paddle2onnx {md.version('paddle2onnx')} (paddlepaddle {md.version('paddlepaddle')}) "
                    f"+ onnxruntime {md.version('onnxruntime')}")
        except md.PackageNotFoundError:
            return "unknown"

    def fingerprint(self, device: str) -> dict[str, str]:
        return {**super().fingerprint(device), "paddle": self.paddle.__version__, "paddle2onnx": self.converter_version}

    def supports(self, case: Case, device: str) -> str | None:
        # Paddle builds the layer on the CPU before export: a dtype with no Paddle CPU kernel cannot be
        # built (float16 fails at parameter load), whatever ONNX Runtime could run afterwards
        if case.epilogue.count("residual") > MAX_RESIDUALS:
            return f"the epilogue's wrapping layer takes at most {MAX_RESIDUALS} residual inputs (forward(x, r0, ..., r3))"
        return self.runtime_reason(case, device) or self.pdb.supports(case, "cpu")

    def layer_args(self, case: Case) -> tuple[str, dict[str, Any]]:
        """The layer class and its constructor arguments (pure: the paddle backend's translation)."""
        kw = self.pdb.translate(case) if hasattr(self, "pdb") else PaddleBackend().translate(case)
        cls = LAYERS[case.family].format(r=case.rank)
        args = {"in_channels": case.in_channels, "out_channels": case.out_channels,
                "kernel_size": list(case.kernel_size), **kw}
        if not case.bias:
            args["bias_attr"] = False
        return cls, args

    def export(self, case: Case, inputs: Inputs, cls: str, args: dict[str, Any]) -> bytes:
        """The layer with the case's weights, exported by paddle.onnx.export into a temporary directory."""
        paddle = self.paddle
        layer = getattr(paddle.nn, cls)(**args)
        layer.weight.set_value(paddle.to_tensor(inputs.w))
        if inputs.b is not None:
            layer.bias.set_value(paddle.to_tensor(inputs.b))
        if case.epilogue:
            layer = epilogue_layer(paddle, layer, case, inputs.epilogue, args["data_format"])
        layer.eval()
        # x in its own dtype (an invalid case may state another), the residuals in the case's
        spec = [paddle.static.InputSpec(shape, case.tensor_dtypes[0] if n == "x" else case.dtype, name=n)
                for n, shape in input_specs(case)]
        import paddle2onnx.convert

        # paddle2onnx makes its own temporary directories (tempfile.mkdtemp): they go inside ours, removed
        # afterwards; ours is named by pid, so one left by an aborted worker is removed by the next setup.
        with tempfile.TemporaryDirectory(prefix=f"{TMP_PREFIX}{os.getpid()}-") as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            saved, tempfile.tempdir = tempfile.tempdir, tmp
            log = io.StringIO()
            try:
                with contextlib.redirect_stdout(log):
                    paddle.onnx.export(layer, os.path.join(tmp, "model"), input_spec=spec)
            except SystemExit as exc:  # paddle2onnx's logging.error calls sys.exit(-1) on a failed conversion
                self.exited = True
                errors = [ln for ln in log.getvalue().splitlines() if "[ERROR]" in ln or "Error:" in ln]
                raise RuntimeError(f"paddle.onnx.export called sys.exit({exc.code}): "
                                   + (ANSI.sub("", errors[-1]).strip() if errors else "no error logged")) from None
            finally:
                tempfile.tempdir = saved
                paddle2onnx.convert.PADDLE2ONNX_EXPORT_TEMP_DIR = None  # its cached dir was inside ours
            path = os.path.join(tmp, "model.onnx")
            if not os.path.exists(path):  # paddle2onnx logs a conversion error and returns
                raise RuntimeError("paddle.onnx.export wrote no model (paddle2onnx logged the error and returned)")
            with open(path, "rb") as fh:
                return fh.read()

    def stale_after_refusal(self, case: Case) -> bool:
        """A conversion paddle2onnx abandoned by sys.exit leaves Paddle's static-graph state behind: the next
        export in the process names a parameter of the abandoned model ("Failed to convert PaddlePaddle model due
        to 'conv1d_transpose_0.w_0'" for a conv1d) or dies by SIGFPE in pir::Value::attribute (paddlepaddle 3.3.1,
        paddle2onnx 2.1.0, measured 2026-12-01). A user's process ends at that sys.exit; the worker that caught it
        is replaced, so that no later case inherits the failure."""
        return self.exited

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        cls, args = self.layer_args(case)
        files, _ = self.cache.fetch(case_key(case, inputs, self.salt),
                                    lambda: {"model.onnx": self.export(case, inputs, cls, args)},
                                    first_line)  # the exporter refused: a finding
        if isinstance(files, str):
            raise Rejected(files)
        model = files["model.onnx"]
        specs = ", ".join(f"InputSpec({shape}, {case.dtype!r}, name={n!r})" for n, shape in input_specs(case))
        names = [n for n, _ in input_specs(case)]
        lines = [f"layer = paddle.nn.{cls}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")  # weight/bias = case inputs",
                 *epilogue_lines(case, args["data_format"], inputs.epilogue),
                 f"paddle.onnx.export(layer, 'model', input_spec=[{specs}])  # paddle2onnx {self.converter_version}: "
                 f"{exported_by(model)}",
                 self.session_line(device).replace("model.SerializeToString()", "open('model.onnx', 'rb').read()"),
                 "y = sess.run(None, {" + ", ".join(f"{n!r}: {n}" for n in names) + "})[0]"]
        arr, dtype = self.run_model(model, inputs.x, device, residual_arrays(case, inputs))
        return Output(np.asarray(arr), dtype, "\n".join(lines))


def input_specs(case: Case) -> list[tuple[str, list[int]]]:
    """The exported layer's inputs (name, shape): x, then one per residual (y's shape, case layout)."""
    return [("x", list(case.input_shape)), *((n, list(case.output_shape)) for n in residual_inputs(case))]


def epilogue_layer(paddle: Any, conv: Any, case: Case, constants: tuple[dict[str, np.ndarray], ...],
                   data_format: str) -> Any:
    """A paddle.nn.Layer: `conv`, then the epilogue as backends/paddle/epilogue.py writes it;
    per-channel constants as its buffers (exported as initializers), residuals as inputs."""
    names = list(paddle_epilogue.residuals(case, constants))

    class Epilogued(paddle.nn.Layer):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.conv = conv
            for k, a in paddle_epilogue.buffers(case, constants).items():
                self.register_buffer(k, paddle.to_tensor(a))

        def forward(self, x: Any, r0: Any = None, r1: Any = None, r2: Any = None, r3: Any = None) -> Any:
            # named arguments: paddle.jit.to_static counts forward()'s parameters, *args is refused
            tensors = {k: getattr(self, k) for k in paddle_epilogue.buffers(case, constants)}
            tensors.update(zip(names, [r0, r1, r2, r3]))
            return paddle_epilogue.apply(paddle, case, data_format, self.conv(x), tensors, constants)

    return Epilogued()


def epilogue_lines(case: Case, data_format: str, constants: tuple[dict[str, np.ndarray], ...]) -> list[str]:
    """The epilogue as the translation's lines (inside the wrapping layer's forward)."""
    if not case.epilogue:
        return []
    return ["# wrapping Layer: forward(x, r0, ...): y = conv(x), then (per-channel constants are its buffers)",
            *paddle_epilogue.lines(case, data_format, constants, prefix="self.")]
