"""TensorFlow: `tensorflow` runs tf.nn ops (`tensorflow-keras`, in keras.py, shares this plumbing).

TF is channels-last: NC* is passed as data_format, but TF's CPU kernels accept it
only for some dtypes (oneDNN float32/bfloat16). Where TF answers "only supports
N*C", the data are transposed around the N*C op and the result says so: a layout
change is an exact identity and keeps the channels_first corpus testable on CPU.
Weights: conv (*k, I/g, O), conv_transpose (*k, O/g, I): TF has no groups argument,
the filter's depth says it (oneDNN's CPU kernels run grouped conv1d/2d_transpose, TF's
own CPU kernels raise); grouped conv3d and conv3d_transpose are `unsupported` (TF's
filter must have the input's depth), never split into groups.
Padding: SAME/VALID and conv2d/conv2d_transpose explicit pairs natively; the
rest by exact identities (pad then VALID; VALID transpose then crop), recorded.
An epilogue runs as tf ops after the bias, in the call's layout (backends/tensorflow/epilogue.py).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported, first_line
from backends.tensorflow import xla_cache as tf_xla_cache
from backends.tensorflow.epilogue import TF_EPILOGUE_OPS, Epilogue
from backends.tensorflow.translate import crop_output, in_nc_only, nn_call
from backends.tensorflow.util import NHWC_ONLY, NODE_PREFIX, TF_EXCLUDES, layout_perms, tf_filter
from backends.torch.eager import tf32_requested
from harness.model.case import Case
from harness.numerics.inputs import Inputs


def onednn_enabled() -> bool:
    """TensorFlow's live oneDNN state in this process (its own IsMklEnabled)."""
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


class TFBase(Backend):
    """Shared plumbing: import, device, dtype conversion, the NC*-fallback and error mapping."""

    framework = "tensorflow"
    excludes = TF_EXCLUDES
    devices = ("cpu", "cuda")

    def version(self) -> str:
        import importlib.metadata as md

        for dist in ("tensorflow", "tensorflow-cpu"):
            try:
                return md.version(dist)
            except md.PackageNotFoundError:
                continue
        return "unknown"

    def setup(self, device: str) -> None:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
        os.environ["KERAS_BACKEND"] = "tensorflow"
        tf_xla_cache.enable(self.version())
        import tensorflow as tf

        tf.get_logger().setLevel("ERROR")
        self.tf = tf
        if self.threads:  # before the runtime starts: TF reads these once, when its eager context is made
            tf.config.threading.set_intra_op_parallelism_threads(self.threads)
            tf.config.threading.set_inter_op_parallelism_threads(self.threads)
        for gpu in tf.config.list_physical_devices("GPU"):
            tf.config.experimental.set_memory_growth(gpu, True)
        tf.config.experimental.enable_tensor_float_32_execution(tf32_requested())

    threads: int | None = None  # set_threads: TF's intra- and inter-op thread pools (oneDNN and Eigen run on them)

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        """The other side of TensorFlow's oneDNN choice, as the main worker's TF decided it (tf_onednn): a
        process setting, read when TF is imported, so the variant's worker starts fresh with it."""
        on = host.get("tf_onednn")
        if on is None:  # no live fact (a plugin's host): TF's default on this x86 build is on unless the variable says 0
            on = os.environ.get("TF_ENABLE_ONEDNN_OPTS") != "0"
        value = "0" if on else "1"
        return (KernelVariant(f"TF_ENABLE_ONEDNN_OPTS={value}", f"TensorFlow's oneDNN op kernels {'off' if on else 'on'} "
                              f"(TF decided {'on' if on else 'off'} here), set before TF is imported",
                              (("TF_ENABLE_ONEDNN_OPTS", value),)),)

    def use_kernel_variant(self, name: str) -> None:
        if name not in ("TF_ENABLE_ONEDNN_OPTS=0", "TF_ENABLE_ONEDNN_OPTS=1"):
            super().use_kernel_variant(name)
        if os.environ.get("TF_ENABLE_ONEDNN_OPTS") != name[-1]:  # the worker was started with the variant's env
            raise Unsupported(f"{self.name}: {name} is a process setting this worker was not started with")

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return int(self.tf.config.threading.get_intra_op_parallelism_threads()) or None  # 0: TF's default

    def device_reason(self, device: str) -> str | None:
        if device == "cpu":
            return None
        if device == "cuda":
            if not self.tf.config.list_physical_devices("GPU"):
                return "no GPU visible to TensorFlow (tf.config.list_physical_devices('GPU') is empty)"
            return None
        return f"unknown device {device}"

    def host_facts(self, device: str) -> dict[str, HostFact]:
        # TF decides oneDNN from the CPU (on by default only with AVX-512 VNNI/BF16 or AMX) and
        # TF_ENABLE_ONEDNN_OPTS; ask TF what it decided rather than reading the variable.
        return {"tf_onednn": onednn_enabled(), "tf_bf16_conv": self.half_conv_runs("bfloat16"),
                "tf_f16_conv": self.half_conv_runs("float16"),
                "tf_threads": int(self.tf.config.threading.get_intra_op_parallelism_threads())}

    def half_conv_runs(self, dtype: str) -> bool:
        """A live probe: does this process run a 1x1 conv2d in `dtype` (bfloat16, float16)? TF decides
        whether its oneDNN kernels take bfloat16/float16 from CPUID alone (AVX512_BF16/AMX, AVX512_FP16);
        oneDNN itself may be capped lower (ONEDNN_MAX_CPU_ISA), and then every such convolution raises
        instead of falling back to Eigen."""
        tf = self.tf
        t = getattr(tf, dtype)
        try:
            tf.nn.conv2d(tf.ones([1, 1, 1, 1], t), tf.ones([1, 1, 1, 1], t), 1, "VALID")
        except Exception:  # noqa: BLE001 - any refusal is the answer
            return False
        return True

    def fingerprint(self, device: str) -> dict[str, str]:
        tf = self.tf
        info = {"version": tf.__version__, "onednn": "on" if onednn_enabled() else "off"}
        if device == "cuda":
            build = tf.sysconfig.get_build_info()
            gpus = tf.config.list_physical_devices("GPU")
            details = tf.config.experimental.get_device_details(gpus[0]) if gpus else {}
            info.update(gpu=str(details.get("device_name", "?")), cuda=str(build.get("cuda_version", "?")),
                        cudnn=str(build.get("cudnn_version", "?")),
                        tf32=str(tf.config.experimental.tensor_float_32_execution_enabled()))
        return info

    def to_numpy(self, y: Any) -> tuple[np.ndarray, str]:
        name = y.dtype.name
        arr = np.asarray(y.numpy())
        if name == "bfloat16":
            import ml_dtypes

            arr = arr.view(ml_dtypes.bfloat16) if arr.dtype.itemsize == 2 else arr.astype(ml_dtypes.bfloat16)
        return np.ascontiguousarray(arr), name

    def call(self, case: Case, x: Any, w: Any, b: Any, nc: bool,
             epi: Epilogue | None = None) -> tuple[Any, list[str], list[str]]:
        """Run the op (then the epilogue, if given) with x in N*C (nc False) or NC* (nc True) layout:
        (y, code lines, notes)."""
        raise NotImplementedError

    def layout_call(self, case: Case, x: Any, w: Any, b: Any, device: str,
                    refused: str = "", epi: Epilogue | None = None) -> tuple[Any, list[str], list[str]]:
        """`call` with x in the case layout: NC* asked for natively first, N*C with transposes around it
        where TF answers "N*C only" (`refused`: it already did, e.g. in the backward pass).
        Framework exceptions propagate."""
        tf = self.tf
        notes: list[str] = []
        want_nc = case.channels_last is False
        native, refusal = not refused, refused
        if want_nc and native:  # ask TF for NC*; fall back only when it answers "N*C only"
            try:
                y, lines, more = self.call(case, x, w, b, nc=True, epi=epi)
            except Exception as exc:  # decide here whether it is the layout
                if not NHWC_ONLY.search(str(exc)):
                    raise
                native, refusal = False, NODE_PREFIX.sub("", first_line(exc))
        if not want_nc or not native:
            to_last, back = layout_perms(case.rank)
            xin = tf.transpose(x, to_last) if want_nc else x
            y, lines, more = self.call(case, xin, w, b, nc=False, epi=epi)
            if want_nc:
                y = tf.transpose(y, back)
                notes.append(f"channels_first: TF on {device} refused the N{'C' + 'DHW'[3 - case.rank:]} call "
                             f"({refusal}); data transposed to N*C around the op")
                lines = in_nc_only(case.rank, lines)
        return y, lines, notes + more

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        tf = self.tf
        with tf.device("/GPU:0" if device == "cuda" else "/CPU:0"):
            x = tf.constant(inputs.x)
            w_tf, pre_line = tf_filter(case, inputs.w)
            w = tf.constant(w_tf)
            b = None if inputs.b is None else tf.constant(inputs.b)
            epi = self.epilogue(case, inputs)
            try:
                y, lines, notes = self.layout_call(case, x, w, b, device, epi=epi)
            except (Unsupported, Rejected):
                raise
            except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
                raise Rejected(NODE_PREFIX.sub("", first_line(exc)), self.route(case)) from None
            arr, dtype = self.to_numpy(y)
        tf32 = (device == "cuda" and case.dtype == "float32"
                and bool(tf.config.experimental.tensor_float_32_execution_enabled()))
        return Output(arr, dtype, "\n".join([pre_line, *lines]), tf32=tf32, notes=notes, path=self.route(case))

    def route(self, case: Case) -> str:
        """Which of the adapter's routes the case takes (Output.path); "" for the direct call."""
        return ""

    def epilogue(self, case: Case, inputs: Inputs) -> Epilogue | None:
        """The case's epilogue with its residuals as tensors (case layout); None without one."""
        if not case.epilogue:
            return None
        res = {f"residual{i}": self.tf.constant(c["r"])
               for i, (name, c) in enumerate(zip(case.epilogue, inputs.epilogue)) if name == "residual"}
        return Epilogue(case, inputs.epilogue, res)

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        from backends.tensorflow.gradients import tape_gradients

        return tape_gradients(self, case, inputs, dy, device)


class TensorFlowBackend(TFBase):
    """tf.nn.conv{1,2,3}d and tf.nn.conv{1,2,3}d_transpose."""

    name = "tensorflow"
    epilogue_ops = TF_EPILOGUE_OPS
    capabilities = Capabilities(
        padding=("same", "valid", "explicit pairs (conv2d, conv2d_transpose)"),
        padding_identities=("conv1d/3d pairs: tf.pad then VALID",
                            "conv_transpose1d/3d pairs: VALID with output_shape, then crop"),
        output_padding="via output_shape",
        dilation="conv, transpose (CPU transpose: oneDNN dtypes only)",
        groups="conv1d/2d (filter I/g), transpose1d/2d (filter O/g, oneDNN CPU kernels only); conv3d, transpose3d: none",
        layouts=("channels_last", "channels_first (NC* data_format; transposed where TF has N*C only)"),
        gradients="tf.GradientTape",
    )

    def supports(self, case: Case, device: str) -> str | None:
        if case.op == "conv_transpose3d" and case.groups > 1:
            return "grouped conv3d_transpose: tf.nn.conv3d_transpose has no groups (filter depth must equal the input's)"
        if case.groups < 1 or case.in_channels % case.groups or case.out_channels % case.groups:
            return "tf.nn conv has no groups argument (groups = input depth / filter depth): a groups value " \
                   "below 1 or not dividing the channels cannot be stated"
        if case.op == "conv3d" and case.groups > 1:
            return "grouped conv3d: tf.nn.conv3d has no groups (filter in_channels must equal the input's)"
        if case.geometry is None and any(p != (0, 0) for p in nn_call(case, True).crop or ()):
            return (f"{case.op}: tf.nn.{case.op.replace('_transpose', '')}_transpose takes no explicit padding; the "
                    "adapter crops it after a VALID transpose, so an invalid case's padding would be judged by "
                    "that crop, not by TensorFlow")
        return None

    def route(self, case: Case) -> str:
        return nn_call(case, True).path

    def call(self, case: Case, x: Any, w: Any, b: Any, nc: bool,
             epi: Epilogue | None = None) -> tuple[Any, list[str], list[str]]:
        tf = self.tf
        plan = nn_call(case, nc)
        if plan.pad_input is not None:
            x = tf.pad(x, plan.pad_input)
        fn = getattr(tf.nn, plan.fn_name)
        if plan.output_shape is None:
            y = fn(x, w, plan.strides, plan.padding, data_format=plan.data_format, dilations=plan.dilations)
        else:
            y = fn(x, w, plan.output_shape, plan.strides, plan.padding, data_format=plan.data_format,
                   dilations=plan.dilations)
        if plan.pad_output is not None:
            y = tf.pad(y, plan.pad_output)
        if plan.crop:
            y = crop_output(y, plan.crop, nc)
        if b is not None:
            y = tf.nn.bias_add(y, b, data_format=plan.bias_format)
        lines = plan.lines(b is not None)
        if epi is not None:
            y, more = epi.apply_tf(tf, y, nc)
            lines += more
        return y, lines, list(plan.notes)
