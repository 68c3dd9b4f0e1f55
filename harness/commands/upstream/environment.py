"""The environment a report states, read live from the tracker's own framework under the snippet's settings.

A fresh interpreter imports that framework alone (never two: TensorFlow then Paddle in one process
segfaults) and prints what the tracker's template asks for: versions, and per framework its own facts
(TensorFlow's git version and oneDNN state, Paddle's run_check line, TVM's git commit and LLVM, OpenVINO's
CPU inference precision, `iree-compile --version`); for the PyTorch trackers, `python -m
torch.utils.collect_env` itself. reports/upstream/environment.py writes it in the tracker's form.
"""

from __future__ import annotations

import contextlib
import json
import platform
import subprocess
import sys
from typing import Any

from harness.commands.upstream.scripts import version
from harness.execution.host import cpu_facts

# tracker -> (what the probe imports, the distributions whose versions it states)
TRACKERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "pytorch/pytorch": ("torch", ("torch", "numpy")),
    "pytorch/executorch": ("torch", ("torch", "executorch", "numpy")),
    "pytorch/ao": ("torch", ("torch", "torchao", "numpy")),
    "tensorflow/tensorflow": ("tensorflow", ("tensorflow-cpu", "tensorflow", "numpy")),
    "keras-team/keras": ("tensorflow", ("keras", "tensorflow-cpu", "numpy")),
    "google-ai-edge/LiteRT": ("", ("ai-edge-litert", "tensorflow-cpu", "numpy")),
    "openxla/xla": ("", ("tensorflow-cpu", "jax", "jaxlib")),
    "jax-ml/jax": ("", ("jax", "jaxlib", "numpy")),
    "PaddlePaddle/Paddle": ("paddle", ("paddlepaddle", "numpy")),
    "PaddlePaddle/Paddle2ONNX": ("", ("paddle2onnx", "paddlepaddle", "onnx", "onnxruntime")),
    "apache/tvm": ("tvm", ("apache-tvm", "numpy")),
    "iree-org/iree": ("iree", ("iree-base-compiler", "iree-base-runtime", "onnx")),
    "llvm/torch-mlir": ("iree", ("iree-base-compiler", "iree-base-runtime", "onnx")),
    "openvinotoolkit/openvino": ("openvino", ("openvino", "onnx", "numpy")),
    "microsoft/onnxruntime": ("", ("onnxruntime", "onnx", "numpy")),
    "onnx/onnx": ("", ("onnx", "protobuf", "onnxruntime", "numpy")),
    "onnx/tensorflow-onnx": ("", ("tf2onnx", "tensorflow-cpu", "onnxruntime", "onnx")),
}

_PROBE = r'''
import contextlib, io, json, os, sys
kind, out = sys.argv[1], {}
if kind == "tensorflow":
    import tensorflow as tf
    from tensorflow.python.util import _pywrap_util_port
    out = {"version": tf.version.VERSION, "git_version": tf.version.GIT_VERSION,
           "onednn": bool(_pywrap_util_port.IsMklEnabled())}
elif kind == "paddle":
    import paddle
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        paddle.utils.run_check()
    line = next((ln for ln in buf.getvalue().splitlines() if "works well" in ln), buf.getvalue().strip()[-120:])
    out = {"version": paddle.__version__, "commit": paddle.version.commit[:12], "cuda": paddle.is_compiled_with_cuda(),
           "mkldnn": bool(paddle.base.core.is_compiled_with_mkldnn()), "run_check": line}
elif kind == "tvm":
    import tvm
    info = tvm.support.libinfo()
    out = {"version": tvm.__version__, "git": info.get("GIT_COMMIT_HASH", "?")[:12], "llvm": info.get("LLVM_VERSION", "?")}
elif kind == "openvino":
    import openvino as ov
    out = {"precision": str(ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT"))}
elif kind == "iree":
    import shutil, subprocess
    exe = shutil.which("iree-compile") or os.path.join(os.path.dirname(sys.executable), "iree-compile")
    text = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    out = {"compile_version": " ".join(text.split())[:160]}
print("PROBE " + json.dumps(out, default=str))
'''
_COLLECT_KEEP = ("PyTorch version", "Is debug build", "CUDA used to build", "OS:", "GCC version", "Libc version",
                 "Python version", "Python platform", "Is CUDA available", "Model name", "[pip3] numpy", "[pip3] torch")


def _collect_env(env: dict[str, str], timeout: float) -> str:
    """collect_env's essentials: the lines its template's readers look at first (its Flags line is long; the
    report states the kernel-selecting flags instead)."""
    proc = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True, text=True,
                          env=env, timeout=timeout)
    return "\n".join(ln.strip() for ln in proc.stdout.splitlines() if ln.strip().startswith(_COLLECT_KEEP))


def host_part(settings: dict[str, str], dists: tuple[str, ...]) -> dict[str, Any]:
    """What needs no framework: the OS, Python, the CPU and its kernel-selecting flags, the versions installed."""
    cpu = cpu_facts()
    facts: dict[str, Any] = {"os": platform.platform(), "machine": platform.machine(), "python": platform.python_version(),
                             "cpu": cpu.get("cpu_model", "?"), "flags": list(cpu.get("cpu_flags", [])),
                             "settings": dict(settings), "framework": {},
                             "versions": {d: version(d) for d in dists if version(d)}}
    with contextlib.suppress(OSError):
        facts["distro"] = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    return facts


def facts_for(tracker: str, settings: dict[str, str], fallback: tuple[str, ...] = (), run: bool = True,
              timeout: float = 300.0) -> dict[str, Any]:
    """The environment facts for `tracker`'s form; the framework's own facts only when `run`."""
    import os

    kind, dists = TRACKERS.get(tracker, ("", fallback or ("numpy",)))
    facts = host_part(settings, dists)
    if not run or not kind:
        return facts
    env = {**os.environ, **settings, "TF_CPP_MIN_LOG_LEVEL": "3"}
    try:
        if kind == "torch":
            facts["framework"]["collect_env"] = _collect_env(env, timeout)
        else:
            proc = subprocess.run([sys.executable, "-c", _PROBE, kind], capture_output=True, text=True, env=env,
                                  timeout=timeout)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE ")), "")
            facts["framework"] = json.loads(line[6:]) if line else {"error": proc.stderr.strip()[-200:]}
    except (subprocess.TimeoutExpired, OSError) as exc:
        facts["framework"] = {"error": str(exc)}
    return facts
