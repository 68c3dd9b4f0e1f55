"""`tensorflow-graph` and `tf-xla`: the `tensorflow` backend's calls (conv, bias, epilogue) traced
into a tf.function, the path Keras predict and SavedModel serving take.

One fresh tf.function per case: the weights, bias and epilogue constants are made inside the
trace from numpy (graph Const nodes, so Grappler may fold and fuse them, e.g. Conv2D + BiasAdd
(+ Relu) into _FusedConv2D); x and each residual are the function's arguments. `tensorflow-graph`
runs it with Grappler's default configuration; `tf-xla` compiles it with jit_compile=True.
A channels_first call that TF refuses at run time ("only supports N*C") is traced again in N*C
with transposes around it, as the eager adapter does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported
from backends.tensorflow.eager import TensorFlowBackend
from backends.tensorflow.epilogue import Epilogue, residual_names
from backends.tensorflow.util import NHWC_ONLY, framework_message, tf_filter
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class TensorFlowGraphBackend(TensorFlowBackend):
    """TensorFlowBackend's tf.nn calls inside tf.function (Grappler on, default config)."""
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)

    name = "tensorflow-graph"
    jit_compile = False
    capabilities = Capabilities(
        padding=TensorFlowBackend.capabilities.padding,
        padding_identities=TensorFlowBackend.capabilities.padding_identities,
        output_padding=TensorFlowBackend.capabilities.output_padding,
        dilation=TensorFlowBackend.capabilities.dilation,
        groups=TensorFlowBackend.capabilities.groups,
        layouts=("channels_last", "channels_first (NC* data_format; retraced in N*C where TF refuses NC* at run time)"),
        gradients="none",
    )

    def decorator(self) -> str:
        return "@tf.function(jit_compile=True)" if self.jit_compile else "@tf.function  # Grappler, default config"

    def traced(self, case: Case, inputs: Inputs, device: str, refused: str) -> tuple[Any, list[str], list[str]]:
        """Trace and run one fresh tf.function: (y, code lines of its body, notes)."""
        tf = self.tf
        w_np, pre_line = tf_filter(case, inputs.w)
        names = residual_names(case)
        record: dict[str, list[str]] = {}

        def body(x: Any, *res: Any) -> Any:
            w = tf.constant(w_np)
            b = None if inputs.b is None else tf.constant(inputs.b)
            epi = Epilogue(case, inputs.epilogue, dict(zip(names, res))) if case.epilogue else None
            y, lines, notes = self.layout_call(case, x, w, b, device, refused, epi=epi)
            record.update(lines=lines, notes=notes)
            return y

        fn = tf.function(body, jit_compile=self.jit_compile, autograph=False)
        args = [tf.constant(inputs.x)]
        args += [tf.constant(c["r"]) for name, c in zip(case.epilogue, inputs.epilogue) if name == "residual"]
        y = fn(*args)
        arg_list = ", ".join(["x", *names])
        consts = "w, b" if inputs.b is not None else "w"
        lines = [pre_line, self.decorator(), f"def f({arg_list}):",
                 f"    # {consts} and the epilogue constants: tf.constant made inside the trace (graph constants)",
                 *(f"    {ln}" for ln in record["lines"]), "    return y", f"y = f({arg_list})"]
        return y, lines, record["notes"]

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        tf = self.tf
        with tf.device("/GPU:0" if device == "cuda" else "/CPU:0"):
            try:
                try:
                    y, lines, notes = self.traced(case, inputs, device, "")
                except Exception as exc:  # NC* refused at run time: trace again in N*C
                    if case.channels_last or not NHWC_ONLY.search(str(exc)):
                        raise
                    y, lines, notes = self.traced(case, inputs, device, framework_message(exc))
            except (Unsupported, Rejected):
                raise
            except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
                raise Rejected(framework_message(exc), self.route(case)) from None
            arr, dtype = self.to_numpy(y)
        tf32 = (device == "cuda" and case.dtype == "float32"
                and bool(tf.config.experimental.tensor_float_32_execution_enabled()))
        return Output(arr, dtype, "\n".join(lines), tf32=tf32, notes=notes, path=self.route(case))

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        return Backend.run_gradients(self, case, inputs, dy, device)


class TfXlaBackend(TensorFlowGraphBackend):
    """The same tf.function compiled by XLA (jit_compile=True)."""

    name = "tf-xla"
    jit_compile = True
    capabilities = Capabilities(
        padding=TensorFlowBackend.capabilities.padding,
        padding_identities=TensorFlowBackend.capabilities.padding_identities,
        output_padding=TensorFlowBackend.capabilities.output_padding,
        dilation="conv, transpose (XLA kernels)",
        groups="conv1d/2d (filter I/g), transpose1d/2d (filter O/g); conv3d, transpose3d: none (tf.nn has no groups)",
        layouts=("channels_last", "channels_first (NC* data_format, compiled by XLA)"),
        gradients="none",
    )

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        # Measured 2026-11-29 (tensorflow-cpu 2.21.0, ONEDNN_VERBOSE=1, a 16->32 channel conv2d): the same oneDNN
        # calls and the same bits with TF_ENABLE_ONEDNN_OPTS=0 and =1.
        raise Unsupported("tf-xla: XLA compiles the convolution itself; TF_ENABLE_ONEDNN_OPTS switches TensorFlow's "
                          "op kernels, not XLA's (the same kernels run with it 0 and 1)")
