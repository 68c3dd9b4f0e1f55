"""paddle-inference: a Paddle layer saved by paddle.jit.save and run by a paddle.inference predictor.

The deployment path of a Paddle model on a server CPU. A paddle.nn.Layer holds the case's
weight (and bias) as parameters and the epilogue's per-channel constants as buffers; its
forward is the `paddle` backend's functional call (every padding form native, data_format for
both layouts, output_padding) followed by the epilogue in paddle ops (backends/paddle/epilogue.py),
each residual a forward() input. paddle.jit.save writes it (PIR: model.json + model.pdiparams)
and a paddle.inference predictor runs it with IR optimization on (`switch_ir_optim(True)`, the
default, so the conv fuse passes run: conv2d_bn_onednn_fuse, conv2d_bias_fuse,
conv2d_transpose_bn_fuse, conv_elementwise_add_onednn_fuse, conv_activation_mkldnn_fuse, ...),
GPU disabled, and oneDNN (MKLDNN) left at Paddle's default (on for a CPU predictor in 3.3.1;
the fingerprint (`inference_onednn`) and every translation record it).

The saved model is cached per case under `$CONVDIFF_CACHE/paddle-inference/<key>/` (default
`.convdiff-cache/paddle-inference/`; `CONVDIFF_CACHE=off` disables), keyed by everything baked
into it (the call's arguments, shapes, dtype, weight/bias/epilogue constants), the paddle
version and this adapter's sources; a refused export is cached too (`<key>/failed`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from backends.artifacts import cache_base, sources_digest
from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported, first_line
from backends.digest import baked_arrays_digest
from backends.paddle import epilogue as paddle_epilogue
from backends.paddle.eager import FUNCTIONS, PADDLE_CAPS, PaddleBackend
from harness.model.case import Case
from harness.numerics.inputs import Inputs

FORMAT = 1  # bump when the cached artefacts or the key's meaning change
SOURCES = ("paddle/inference.py", "paddle/eager.py", "paddle/epilogue.py")  # what writes the model
MAX_RESIDUALS = 4  # forward(x, residual0=None, ..., residual3=None): to_static refuses *args
CPU_DTYPES = ("float32", "float64")
DTYPE_REASONS = {  # measured with paddlepaddle 3.3.1 (a plain F.conv2d layer, jit.save, CPU predictor)
    "float16": "paddle.inference (CPU) refuses a float16 model: the saved program fails its type check "
               "(\"Check data type error for op: conv2d, input.dtype: float16, expected_dtype: bfloat16, "
               "float32, float64, int8, uint8\")",
    "bfloat16": "paddle.inference (CPU) cannot run a bfloat16 model: it saves, but predictor.run raises "
                "\"The type of data we are trying to retrieve (bfloat16) does not match the type of data "
                "(float32) currently contained in the container\" (oneDNN bfloat16 is reached only through "
                "enable_mkldnn_bfloat16 on a float32 model)",
}


def cache_root() -> Path | None:
    """The saved-model cache directory, or None when caching is switched off."""
    base = cache_base()
    return None if base is None else base / "paddle-inference"


def source_digest() -> str:
    """sha256 of the adapter sources that decide what is saved."""
    return sources_digest(SOURCES)


def paddle_message(exc: BaseException) -> str:
    """Paddle's error in one line: its `XxxError: ...` line (Paddle's message starts with
    "In user code:" and a blank line), without the hint and source location that follow."""
    for line in str(exc).splitlines():
        line = line.strip()
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception")) and " " not in head:
            line = line.split(" [Hint", 1)[0]
            return line if head == type(exc).__name__ else f"{type(exc).__name__}: {line}"
    return first_line(exc)


def input_specs(case: Case) -> list[tuple[str, list[int]]]:
    """The saved layer's inputs (name, shape): x, then one per residual (y's shape, case layout)."""
    res = [f"residual{i}" for i, name in enumerate(case.epilogue) if name == "residual"]
    return [("x", list(case.input_shape)), *((n, list(case.output_shape)) for n in res)]



SCRATCH = "convdiff-paddle-inference-"  # + pid: a worker that crashes in the predictor leaves its scratch


def sweep_scratch() -> None:
    """Remove the scratch directories of workers that died mid-case (their pid no longer runs)."""
    for d in Path(tempfile.gettempdir()).glob(f"{SCRATCH}*-*"):
        pid = d.name.removeprefix(SCRATCH).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


class PaddleInferenceBackend(Backend):
    """Layer -> paddle.jit.save -> paddle.inference predictor (CPU, IR optim on, oneDNN at default)."""
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)
    name = "paddle-inference"
    framework = "paddle"
    excludes = ("torch",)  # paddle imports tvm_ffi, which imports torch when installed (Backend.excludes)
    distribution = "paddlepaddle"
    devices = ("cpu",)
    epilogue_ops = paddle_epilogue.PADDLE_EPILOGUE_OPS
    capabilities = Capabilities(
        padding=PADDLE_CAPS["padding"],
        dtypes=("float32", "float64"),
        devices=("cpu",),
        gradients="none",
    )

    onednn: bool | None = None  # use_kernel_variant: the Config's oneDNN switched to this (None: Paddle's default)

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        """The other side of the predictor's oneDNN default (paddle_inference_onednn, read live)."""
        on = not host.get("paddle_inference_onednn", True)
        call = "enable_mkldnn" if on else "disable_mkldnn"
        return (KernelVariant(f"config.{call}()", f"paddle.inference.Config.{call}(): the predictor's "
                              f"{'oneDNN' if on else 'plain CPU'} kernels and fuse passes instead of its default "
                              f"{'plain CPU' if on else 'oneDNN'} ones"),)

    def use_kernel_variant(self, name: str) -> None:
        if name not in ("config.enable_mkldnn()", "config.disable_mkldnn()"):
            super().use_kernel_variant(name)
        self.onednn = name == "config.enable_mkldnn()"

    def setup(self, device: str) -> None:
        self.pdb = PaddleBackend()
        self.pdb.setup("cpu")
        self.paddle = self.pdb.paddle
        import paddle.inference

        self.inference = paddle.inference
        self.cache_root = cache_root()
        self._sources = source_digest()
        self._onednn: bool | None = None
        self.last: tuple[tuple, tuple] | None = None  # ((key, threads, oneDNN switch), (predictor, how, onednn))
        sweep_scratch()

    def stale_after_refusal(self, case: Case) -> bool:
        """After a refused predictor whose model fused an activation, the next predictor applies it to its first
        forward conv (paddlepaddle 3.3.1, oneDNN on: known issue paddle-inference-onednn-failed-run-leaks-activation):
        a refused case with an epilogue gets the worker replaced."""
        return bool(case.epilogue)

    def device_reason(self, device: str) -> str | None:
        return None if device == "cpu" else f"{self.name} runs the CPU predictor only (config.disable_gpu())"

    def config(self, model_dir: Path) -> Any:
        """The predictor's Config: CPU, IR optimization on, oneDNN at Paddle's default."""
        cfg = self.inference.Config(str(model_dir / "model.json"), str(model_dir / "model.pdiparams"))
        cfg.disable_gpu()
        cfg.switch_ir_optim(True)
        cfg.disable_glog_info()
        if self.threads:
            cfg.set_cpu_math_library_num_threads(self.threads)
        if self.onednn is not None:
            cfg.enable_mkldnn() if self.onednn else cfg.disable_mkldnn()
        return cfg

    threads: int | None = None  # set_threads: Config.set_cpu_math_library_num_threads (the predictor's default: 1)

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        cfg = self.inference.Config()
        if self.threads:
            cfg.set_cpu_math_library_num_threads(self.threads)
        return int(cfg.cpu_math_library_num_threads())

    def onednn_default(self) -> bool:
        """Whether a default CPU Config runs oneDNN (read from Paddle, not assumed)."""
        if self._onednn is None:
            cfg = self.inference.Config()
            cfg.disable_gpu()
            self._onednn = bool(cfg.mkldnn_enabled())
        return self._onednn

    def fingerprint(self, device: str) -> dict[str, str]:
        return {**self.pdb.fingerprint("cpu"), "inference_onednn": str(self.onednn_default()), "ir_optim": "True"}

    def host_facts(self, device: str) -> dict[str, HostFact]:
        return {**self.pdb.host_facts("cpu"), "paddle_inference_onednn": self.onednn_default()}

    def supports(self, case: Case, device: str) -> str | None:
        if case.epilogue.count("residual") > MAX_RESIDUALS:
            return f"the saved layer takes at most {MAX_RESIDUALS} residual inputs (forward(x, residual0, ..., residual3))"
        if case.dtype not in CPU_DTYPES:
            return DTYPE_REASONS.get(case.dtype, f"paddle.inference (CPU) has no {case.dtype} path")
        return self.pdb.supports(case, "cpu")

    # --- the saved model ---------------------------------------------------------
    def key(self, case: Case, inputs: Inputs) -> str:
        """sha256 over what the saved model holds and what wrote it."""
        h = hashlib.sha256()
        spec = {"format": FORMAT, "paddle": self.paddle.__version__, "sources": self._sources,
                "fn": FUNCTIONS[case.op][0], "kw": self.pdb.translate(case), "dtype": case.dtype,
                "inputs": input_specs(case), "epilogue": list(case.epilogue), "bias": inputs.b is not None}
        if case.input_dtype:  # an invalid case's x in its own dtype (the others' keys stay as they were)
            spec["x_dtype"] = case.input_dtype
        h.update(json.dumps(spec, sort_keys=True, default=str).encode())
        return baked_arrays_digest(case, inputs, h)

    def layer(self, case: Case, inputs: Inputs) -> Any:
        """The paddle.nn.Layer: conv parameters, epilogue buffers, forward = conv + bias + epilogue."""
        paddle = self.paddle
        import paddle.nn.functional as F

        fn, kw = getattr(F, FUNCTIONS[case.op][0]), self.pdb.translate(case)
        consts = paddle_epilogue.buffers(case, inputs.epilogue)
        n_res = case.epilogue.count("residual")
        res_names = list(paddle_epilogue.residuals(case, inputs.epilogue)) if n_res else []

        def parameter(owner: Any, a: np.ndarray) -> Any:
            # an invalid case's tensor in its own dtype (never cast to the case's): Paddle decides
            dtype = case.dtype if case.geometry is not None else a.dtype.name
            return owner.create_parameter(list(a.shape), dtype=dtype,
                                          default_initializer=paddle.nn.initializer.Assign(a))

        class ConvEpilogue(paddle.nn.Layer):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.w = parameter(self, inputs.w)
                self.b = None if inputs.b is None else parameter(self, inputs.b)
                for k, a in consts.items():
                    self.register_buffer(k, paddle.to_tensor(a))

            def forward(self, x: Any, residual0: Any = None, residual1: Any = None, residual2: Any = None,
                        residual3: Any = None) -> Any:
                y = fn(x, self.w, self.b, **kw)
                if case.epilogue:
                    tensors = {k: getattr(self, k) for k in consts}
                    tensors.update(zip(res_names, [residual0, residual1, residual2, residual3][:n_res]))
                    y = paddle_epilogue.apply(paddle, case, kw["data_format"], y, tensors, inputs.epilogue)
                return y

        net = ConvEpilogue()
        net.eval()
        return net

    def save(self, case: Case, inputs: Inputs, where: Path) -> None:
        """paddle.jit.save of the layer into `where` (model.json, model.pdiparams)."""
        paddle = self.paddle
        x_dtype = case.tensor_dtypes[0]  # an invalid case's x may be stated in another dtype
        spec = [paddle.static.InputSpec(shape, x_dtype if n == "x" else case.dtype, name=n)
                for n, shape in input_specs(case)]
        paddle.jit.save(self.layer(case, inputs), str(where / "model"), input_spec=spec)

    def model_dir(self, case: Case, inputs: Inputs, scratch: Path) -> tuple[Path, str]:
        """The saved model's directory (cached, or freshly saved into `scratch`) and how it was got."""
        root = self.cache_root
        key = self.key(case, inputs)
        final = None if root is None else root / key
        if final is not None and (final / "failed").exists():
            raise Rejected((final / "failed").read_text())
        if final is not None and (final / "model.pdiparams").exists() and (final / "model.json").exists():
            return final, f"cache hit {key[:12]}"
        out = scratch / "model"
        out.mkdir()
        try:
            self.save(case, inputs, out)
        except Exception as exc:  # noqa: BLE001 - tracing or saving failed: a finding
            message = paddle_message(exc)
            self._store(final, scratch, {"failed": message})
            raise Rejected(message) from None
        self._store(final, out, None)
        return out, "saved"

    def _store(self, final: Path | None, src: Path, failed: dict[str, str] | None) -> None:
        """Copy a saved model (or the refusal) into the cache atomically: a temporary sibling, then rename."""
        if final is None:
            return
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name[:12]}-"))
        try:
            if failed is not None:
                (tmp / "failed").write_text(failed["failed"])
            else:
                for f in src.iterdir():
                    shutil.copy2(f, tmp / f.name)
            os.replace(tmp, final)
        except OSError:  # another worker stored it first
            shutil.rmtree(tmp, ignore_errors=True)

    # --- the run ---------------------------------------------------------------
    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if case.dtype not in CPU_DTYPES:
            raise Unsupported(DTYPE_REASONS.get(case.dtype, f"paddle.inference (CPU) has no {case.dtype} path"))
        arrays = {"x": inputs.x, **paddle_epilogue.residuals(case, inputs.epilogue)}
        # the predictor of the previous run, where this run's saved model and Config are the same (a relation's
        # repeat, the single rows of its batch): a deployed predictor runs many inputs
        kept = (self.key(case, inputs), self.threads, self.onednn)
        last, self.last = self.last, None  # kept again once this run has answered
        if last is not None and last[0] == kept:
            predictor, how, onednn = last[1]
            y = self._predict(predictor, arrays)
        else:
            # the kept predictor goes before another is made: with both alive, a channels-first conv3d came back
            # in channels-last order (shard 2 of 32 from an empty cache: 8 results of one case; 0 with this del)
            del last
            with tempfile.TemporaryDirectory(prefix=f"{SCRATCH}{os.getpid()}-") as scratch:
                where, how = self.model_dir(case, inputs, Path(scratch))
                try:
                    cfg = self.config(where)
                    onednn = bool(cfg.mkldnn_enabled())
                    predictor = self.inference.create_predictor(cfg)
                except Exception as exc:  # noqa: BLE001 - the predictor refused a saved model: a finding
                    raise Rejected(paddle_message(exc)) from None
                y = self._predict(predictor, arrays)
        if how.startswith("cache hit"):  # a predictor of cached files (a fresh save's scratch copy is gone)
            self.last = (kept, (predictor, how, onednn))
        return Output(np.ascontiguousarray(y), y.dtype.name, self.translation(case, inputs, how, onednn))

    def _predict(self, predictor: Any, arrays: dict[str, np.ndarray]) -> np.ndarray:
        try:
            for n in predictor.get_input_names():
                predictor.get_input_handle(n).copy_from_cpu(np.ascontiguousarray(arrays[n]))
            predictor.run()
            return predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
        except Exception as exc:  # noqa: BLE001 - the predictor refused the model or its inputs: a finding
            raise Rejected(paddle_message(exc)) from None

    def translation(self, case: Case, inputs: Inputs, how: str, onednn: bool) -> str:
        """The layer, the save and the predictor as a user writes them."""
        kw = self.pdb.translate(case)
        bias = inputs.b is not None
        call = self.pdb.call_line(case, bias).replace("(x, w, ", "(x, self.w, ", 1)
        if bias:
            call = call.replace("self.w, b, ", "self.w, self.b, ", 1)
        specs = input_specs(case)
        args = ", ".join(n for n, _ in specs)
        consts = list(paddle_epilogue.buffers(case, inputs.epilogue))
        body = [call, *paddle_epilogue.lines(case, kw["data_format"], inputs.epilogue, prefix="self.")]
        spec_code = ", ".join(f"InputSpec({shape}, {case.dtype!r}, name={n!r})" for n, shape in specs)
        feed = "; ".join(f"predictor.get_input_handle({n!r}).copy_from_cpu({n})" for n, _ in specs)
        return "\n".join([
            "import paddle", "import paddle.nn.functional as F", "from paddle.static import InputSpec",
            f"class Net(paddle.nn.Layer):  # self.w{', self.b' if bias else ''}: parameters (case weights)"
            + (f"; buffers {', '.join(consts)}" if consts else ""),
            f"    def forward(self, {args}):", *(f"        {ln}" for ln in body), "        return y",
            f"paddle.jit.save(Net(), 'model', input_spec=[{spec_code}])  # {how}",
            "config = paddle.inference.Config('model.json', 'model.pdiparams')",
            f"config.disable_gpu(); config.switch_ir_optim(True)  # oneDNN: {'on' if onednn else 'off'} "
            + ("(default)" if self.onednn is None else f"(config.{'enable' if onednn else 'disable'}_mkldnn())"),
            "predictor = paddle.inference.create_predictor(config)",
            f"{feed}; predictor.run()",
            "y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()",
        ])
