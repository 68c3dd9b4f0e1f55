"""Paddle: paddle.nn.functional conv*d / conv*d_transpose, every canonical form passed natively.

Paddle takes channels-first or channels-last through `data_format`, explicit padding
as an int, a per-dimension list, a per-side list or per-side pairs, and 'SAME'/'VALID'
as padding algorithms, so no padding identity is needed: the adapter only chooses the
native form that says the canonical padding exactly. Canonical `same` is TensorFlow's;
it is passed as Paddle's own 'SAME', so where the two disagree that is a finding.

Two backends: `paddle` gives a transposed output length by `output_padding`;
`paddle-output-size` gives it by `output_size`, a separate path in Paddle's shape
inference. Forward convolutions have no output_size, so that variant declares them
unsupported instead of re-running what `paddle` already runs.
An epilogue runs as paddle ops after the conv, in the case layout (backends/paddle/epilogue.py).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported, first_line
from backends.paddle import epilogue as paddle_epilogue
from harness.model.case import Case, resolve_geometry
from harness.numerics.inputs import Inputs

# paddle.nn.functional name and the phi kernel that runs it (1-D convs go through the 2-D kernels).
FUNCTIONS = {
    "conv1d": ("conv1d", "conv2d"), "conv2d": ("conv2d", "conv2d"), "conv3d": ("conv3d", "conv3d"),
    "conv_transpose1d": ("conv1d_transpose", "conv2d_transpose"),
    "conv_transpose2d": ("conv2d_transpose", "conv2d_transpose"),
    "conv_transpose3d": ("conv3d_transpose", "conv3d_transpose"),
}
DATA_FORMATS = {
    (1, False): "NCL", (1, True): "NLC", (2, False): "NCHW", (2, True): "NHWC",
    (3, False): "NCDHW", (3, True): "NDHWC",
}
# phi kernel registry spelling -> canonical dtype name
KERNEL_DTYPES = {"float": "float32", "double": "float64", "::phi::dtype::float16": "float16",
                 "::phi::dtype::bfloat16": "bfloat16"}
PADDLE_CAPS = dict(
    padding=("symmetric (int or per-dim list)", "asymmetric (per-side list, or per-side pairs for N*C)",
             "same (Paddle's SAME)", "valid"),
    # float16/bfloat16: no CPU kernel in 3.3.1; on CUDA, supports() reads Paddle's kernel registry (untested here)
    dtypes=("float32", "float64", "float16 (cuda only)", "bfloat16 (cuda only)"),
    gradients="paddle.grad",
)


def tf32_requested() -> bool:
    """TF32 is off unless CONVDIFF_TF32=on (same switch as the torch backend)."""
    return os.environ.get("CONVDIFF_TF32", "off").lower() in ("1", "on", "true")


def padding_argument(pads: tuple[tuple[int, int], ...], channels_last: bool) -> Any:
    """The shortest native Paddle form that says these (before, after) pairs exactly.

    Equal everywhere -> int; symmetric -> one int per dim; asymmetric -> the flat
    per-side list [b0, a0, b1, a1, ...] for NC* and, for N*C, the nested pairs that
    name the batch and channel axes too (the form whose axis order depends on the layout).
    """
    flat = [v for pair in pads for v in pair]
    if len(set(flat)) == 1:
        return flat[0]
    if all(b == a for b, a in pads):
        return [b for b, _ in pads]
    if channels_last:
        return [[0, 0], *([b, a] for b, a in pads), [0, 0]]
    return flat


class PaddleBackend(Backend):
    """`paddle`: transposed output length by output_padding."""

    name = "paddle"
    framework = "paddle"
    excludes = ("torch",)  # paddle imports tvm_ffi, which imports torch when installed (Backend.excludes)
    distribution = "paddlepaddle"
    use_output_size = False
    epilogue_ops = paddle_epilogue.PADDLE_EPILOGUE_OPS
    capabilities = Capabilities(output_padding="native", **PADDLE_CAPS)

    threads: int | None = None

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return int(self.paddle.get_flags(["FLAGS_paddle_num_threads"])["FLAGS_paddle_num_threads"])

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        # Measured 2026-11-29 (paddlepaddle 3.3.1, ONEDNN_VERBOSE=1): with FLAGS_use_mkldnn on, no oneDNN primitive
        # runs for a dygraph conv2d and the bits are the default's; paddle.inference's Config switches it.
        raise Unsupported(f"{self.name}: FLAGS_use_mkldnn does not reach dygraph convolutions (paddlepaddle "
                          f"{self.version()}: no oneDNN primitive runs with it on); Paddle's oneDNN convolutions are "
                          "paddle-inference's kernel variant")

    def setup(self, device: str) -> None:
        os.environ.setdefault("GLOG_minloglevel", "2")  # silence glog before the import reads it
        warnings.filterwarnings("ignore", module=r"paddle\..*")  # e.g. the ccache notice on import
        import paddle

        paddle.disable_signal_handler()  # a segfault must kill the worker plainly: the runner reports it
        self.paddle = paddle
        if self.threads:  # the CPU math library's threads (oneDNN, MKL): FLAGS_paddle_num_threads, default 1
            paddle.base.core.set_num_threads(self.threads)
            paddle.set_flags({"FLAGS_paddle_num_threads": self.threads})
        self._kernels: dict[str, set[tuple[str, str]]] = {}
        if device == "cuda" and self.device_reason("cuda") is None:
            paddle.set_device("gpu")
            if "FLAGS_allow_tf32_cudnn" in self._flags():
                paddle.set_flags({"FLAGS_allow_tf32_cudnn": tf32_requested()})
        else:
            paddle.set_device("cpu")

    def _flags(self) -> set[str]:
        from paddle.base import core

        return set(core.globals().keys())

    def device_reason(self, device: str) -> str | None:
        if device == "cpu":
            return None
        if device != "cuda":
            return f"unknown device {device}"
        paddle = self.paddle
        if not paddle.device.is_compiled_with_cuda():
            return f"paddlepaddle {paddle.__version__} is a CPU-only build (is_compiled_with_cuda() is False)"
        if paddle.device.cuda.device_count() == 0:
            return "no CUDA device visible to paddle (paddle.device.cuda.device_count() == 0)"
        return None

    def host_facts(self, device: str) -> dict[str, HostFact]:
        core = self.paddle.base.core
        use = bool(self.paddle.get_flags(["FLAGS_use_mkldnn"]).get("FLAGS_use_mkldnn"))
        return {"paddle_onednn": bool(core.is_compiled_with_onednn()) and use}

    def fingerprint(self, device: str) -> dict[str, str]:
        paddle = self.paddle
        info = {"version": paddle.__version__, "commit": str(paddle.version.commit)[:12],
                "onednn": str(paddle.get_flags(["FLAGS_use_mkldnn"]).get("FLAGS_use_mkldnn"))}
        if device == "cuda":
            info.update(cuda=str(paddle.version.cuda()), cudnn=str(paddle.version.cudnn()),
                        gpu=paddle.device.cuda.get_device_name(0))
            if "FLAGS_allow_tf32_cudnn" in self._flags():
                info["tf32"] = str(paddle.get_flags(["FLAGS_allow_tf32_cudnn"])["FLAGS_allow_tf32_cudnn"])
        return info

    # --- what Paddle can run ------------------------------------------------
    def kernel_dtypes(self, kernel: str) -> set[tuple[str, str]]:
        """(place, dtype) pairs of the plain phi kernels registered under this name."""
        if kernel not in self._kernels:
            from paddle.base import core

            found = set()
            for key in core._get_all_register_op_kernels("phi").get(kernel, []):
                if "library_type[PLAIN]" not in key:
                    continue  # oneDNN kernels are only used with FLAGS_use_mkldnn, not by default
                dtype = key.split("data_type[", 1)[1].split("]", 1)[0]
                place = "cpu" if "Place(cpu)" in key else "cuda"
                found.add((place, KERNEL_DTYPES.get(dtype, dtype)))
            self._kernels[kernel] = found
        return self._kernels[kernel]

    def supports(self, case: Case, device: str) -> str | None:
        if self.use_output_size and not case.transpose:
            return "output_size exists only for transposed convolutions (forward convs run under backend 'paddle')"
        fn, kernel = FUNCTIONS[case.op]
        if (device, case.dtype) not in self.kernel_dtypes(kernel):
            have = sorted(d for p, d in self.kernel_dtypes(kernel) if p == device)
            via = f" (F.{fn} runs it)" if kernel != fn else ""
            return (f"paddle {self.paddle.__version__} has no {device} {case.dtype} kernel for {kernel}{via}; "
                    f"registered: {', '.join(have) or 'none'}")
        return None

    # --- the call ------------------------------------------------------------
    def translate(self, case: Case) -> dict[str, Any]:
        """Keyword arguments for F.<op>, in the canonical case's meaning."""
        rank = case.rank
        kw: dict[str, Any] = {"stride": list(case.stride), "dilation": list(case.dilation), "groups": case.groups}
        if isinstance(case.padding, str):
            kw["padding"] = case.padding.upper()
        else:
            kw["padding"] = padding_argument(case.padding, case.channels_last)
        if case.transpose:
            geo, extend, size = case.geometry, (), ()
            if geo is not None:
                # SAME's own tail (kernel shorter than stride) is Paddle's SAME to say, not output_padding's
                extend, size = (() if isinstance(case.padding, str) else geo.extend), geo.out_size
            else:  # invalid case: pass what the user wrote, let Paddle judge
                extend = case.output_padding
                geo = resolve_geometry(True, case.input_size, case.kernel_size, case.stride, case.padding,
                                       case.output_padding, case.dilation)
                size = tuple(n + (e if isinstance(case.padding, str) else 0) for n, e in zip(geo.out_size, extend))
            if self.use_output_size:
                kw["output_size"] = list(size)
            elif any(extend):
                kw["output_padding"] = list(extend)
        kw["data_format"] = DATA_FORMATS[(rank, case.channels_last)]
        return kw

    def call_line(self, case: Case, bias: bool) -> str:
        """The F.<op> call as source: the translation's last line, and `convdiff repro`'s call."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.translate(case).items())
        return f"y = F.{FUNCTIONS[case.op][0]}(x, w, {'b' if bias else 'None'}, {args})"

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        paddle = self.paddle
        import paddle.nn.functional as F

        fn_name = FUNCTIONS[case.op][0]
        kw = self.translate(case)
        cast = ".astype('bfloat16')" if case.dtype == "bfloat16" else ""
        lines = ["import paddle", "import paddle.nn.functional as F",
                 f"paddle.set_device({'gpu' if device == 'cuda' else 'cpu'!r})",
                 f"x, w = paddle.to_tensor(x){cast}, paddle.to_tensor(w){cast}"]
        if inputs.b is not None:
            lines.append(f"b = paddle.to_tensor(b){cast}")
        lines.append(self.call_line(case, inputs.b is not None))
        if case.epilogue:
            named = [*paddle_epilogue.buffers(case, inputs.epilogue), *paddle_epilogue.residuals(case, inputs.epilogue)]
            if named:
                lines.append(f"{', '.join(named)} = (paddle.to_tensor(v){cast} for v in ({', '.join(named)}{',' if len(named) == 1 else ''}))"
                             "  # epilogue constants (case dtype), residuals (y's shape)")
            lines += paddle_epilogue.lines(case, kw["data_format"], inputs.epilogue)
        try:
            x, w = self.to_tensor(inputs.x), self.to_tensor(inputs.w)
            b = None if inputs.b is None else self.to_tensor(inputs.b)
            with paddle.no_grad():
                y = getattr(F, fn_name)(x, w, b, **kw)
                if case.epilogue:
                    tensors = {k: self.to_tensor(v) for k, v in {**paddle_epilogue.buffers(case, inputs.epilogue),
                                                                   **paddle_epilogue.residuals(case, inputs.epilogue)}.items()}
                    y = paddle_epilogue.apply(paddle, case, kw["data_format"], y, tensors, inputs.epilogue)
            arr, dtype = self.to_numpy(y)
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        tf32 = device == "cuda" and case.dtype == "float32" and self._tf32()
        return Output(arr, dtype, "\n".join(lines), tf32=tf32)

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        """paddle.grad of the same functional call, with grad_outputs=dy."""
        paddle = self.paddle
        import paddle.nn.functional as F

        kw = self.translate(case)
        names = ["grad_input", "grad_weight", *(["grad_bias"] if inputs.b is not None else [])]
        try:
            leaves = [self.to_tensor(a) for a in (inputs.x, inputs.w, inputs.b) if a is not None]
            for t in leaves:
                t.stop_gradient = False
            y = getattr(F, FUNCTIONS[case.op][0])(leaves[0], leaves[1], leaves[2] if len(leaves) > 2 else None, **kw)
            grads = paddle.grad([y], leaves, grad_outputs=[self.to_tensor(dy)])
            arrays = [self.to_numpy(g) for g in grads]
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        what = ", ".join(("x", "w", "b")[:len(names)])
        lines = [f"{what} = (paddle.to_tensor(v, stop_gradient=False) for v in ({what},))",
                 self.call_line(case, inputs.b is not None),
                 f"grads = paddle.grad([y], [{what}], grad_outputs=[paddle.to_tensor(dy)])"]
        tf32 = device == "cuda" and case.dtype == "float32" and self._tf32()
        return {n: Output(a, d, "\n".join(lines), tf32=tf32) for n, (a, d) in zip(names, arrays)}

    def _tf32(self) -> bool:
        """Whether cuDNN may use TF32: Paddle's flag when this build has one, else assume it may."""
        if "FLAGS_allow_tf32_cudnn" not in self._flags():
            return True
        return bool(self.paddle.get_flags(["FLAGS_allow_tf32_cudnn"])["FLAGS_allow_tf32_cudnn"])

    # --- tensors ----------------------------------------------------------
    def to_tensor(self, a: np.ndarray) -> Any:
        """bfloat16 goes through float32 (exact: every bfloat16 is a float32)."""
        if a.dtype.name == "bfloat16":
            return self.paddle.to_tensor(a.astype(np.float32)).astype("bfloat16")
        return self.paddle.to_tensor(a)

    def to_numpy(self, t: Any) -> tuple[np.ndarray, str]:
        name = str(t.dtype).removeprefix("paddle.")
        if name == "bfloat16":
            import ml_dtypes

            return t.astype("float32").numpy().astype(ml_dtypes.bfloat16), name
        return t.numpy(), name


class PaddleOutputSizeBackend(PaddleBackend):
    """`paddle-output-size`: transposed output length by output_size (Paddle checks it lies
    within [inferred, inferred + stride)); forward convolutions are unsupported here."""

    name = "paddle-output-size"
    use_output_size = True
    capabilities = Capabilities(ops=("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"),
                                output_padding="via output_size", dilation="transpose",
                                groups="transpose", **PADDLE_CAPS)
