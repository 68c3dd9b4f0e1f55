"""The environment block of a report, in the form the tracker's own issue template asks for.

Read from each tracker's template (2026-11-29): pytorch/pytorch and pytorch/executorch ask for the output
of `python -m torch.utils.collect_env`; tensorflow/tensorflow's form asks for issue type, TF nightly,
source, TensorFlow version (`tf.version.GIT_VERSION, tf.version.VERSION`), custom code, OS, mobile device,
Python, Bazel, compiler, CUDA/cuDNN and GPU; its TFLite converter template for OS, source and version;
keras-team/keras for the same system information list; PaddlePaddle/Paddle leaves the environment
free-form; apache/tvm asks for "Operating System, TVM version, etc"; iree-org/iree for the version and, for
compiler issues, the input IR and the commands run; openvinotoolkit/openvino for OpenVINO version, OS,
device, framework and model; microsoft/onnxruntime for platform, OS version, installation, version, API,
architecture and execution provider; onnx/onnx for OS, ONNX, Python and Protobuf versions.

`facts` is what harness/commands/upstream/environment.py read live from the tracker's framework, under the
snippet's own settings: os, distro, machine, python, cpu, flags, settings, versions, framework (per-framework
facts: collect_env's text, TensorFlow's git version and oneDNN state, Paddle's run_check line, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reports.upstream.model import Block

Facts = dict[str, Any]


def _os(f: Facts) -> str:
    return f"{f.get('distro') or f.get('os', '?')} ({f.get('machine', '?')})"


def _cpu(f: Facts) -> str:
    flags = " ".join(f.get("flags", [])) or "none of the kernel-selecting ones"
    return f"{f.get('cpu', '?')}; {flags}"


def _settings(f: Facts) -> list[str]:
    s = f.get("settings") or {}
    return [f"Environment: {', '.join(f'{k}={v}' for k, v in s.items())}"] if s else []


def _versions(f: Facts, *names: str) -> str:
    v = f.get("versions", {})
    return ", ".join(f"{n} {v[n]}" for n in names if n in v) or ", ".join(f"{k} {x}" for k, x in v.items())


def _torch(f: Facts, latest: str) -> list[str]:
    fw = f.get("framework", {})
    lines = [ln for ln in str(fw.get("collect_env", "")).splitlines() if ln.strip()]
    if not lines:
        lines = [f"PyTorch version: {f.get('versions', {}).get('torch', '?')}", f"OS: {_os(f)}",
                 f"Python version: {f.get('python', '?')}", f"CPU: {_cpu(f)}"]
    extra = [f"[pip3] {k}=={v}" for k, v in f.get("versions", {}).items() if k not in ("torch", "numpy")]
    return [*lines, *extra, *_settings(f)]


def _tensorflow(f: Facts, latest: str) -> list[str]:
    fw = f.get("framework", {})
    return [
        "Issue type: Bug",
        f"Have you reproduced the bug with TF nightly: {latest or 'no'}",
        f"Source: binary ({_versions(f, 'tensorflow-cpu', 'tensorflow')} from PyPI)",
        f"TensorFlow version: {fw.get('git_version', '?')} {fw.get('version', '?')}",
        "Custom code: Yes",
        f"OS platform and distribution: {_os(f)}",
        f"Python version: {f.get('python', '?')}",
        "Bazel / GCC version: n/a (binary)", "CUDA/cuDNN version, GPU: none (CPU)",
        f"CPU: {_cpu(f)}; oneDNN on: {fw.get('onednn', '?')}",
        *_settings(f),
    ]


def _litert(f: Facts, latest: str) -> list[str]:
    return [f"OS platform and distribution: {_os(f)}", "TensorFlow installed from: binary (PyPI)",
            f"Versions: {_versions(f)}", f"Python version: {f.get('python', '?')}", f"CPU: {_cpu(f)}", *_settings(f)]


def _keras(f: Facts, latest: str) -> list[str]:
    fw = f.get("framework", {})
    return ["Have I written custom code: Yes", f"OS platform and distribution: {_os(f)}",
            "TensorFlow installed from: binary (PyPI)",
            f"TensorFlow version: {fw.get('git_version', '?')} {fw.get('version', '?')}; Keras {f.get('versions', {}).get('keras', '?')}",
            f"Python version: {f.get('python', '?')}", "GPU model and memory: none (CPU)",
            "Exact command to reproduce: python repro.py", f"CPU: {_cpu(f)}", *_settings(f)]


def _paddle(f: Facts, latest: str) -> list[str]:
    fw = f.get("framework", {})
    return [f"PaddlePaddle: {fw.get('version', '?')} (commit {fw.get('commit', '?')}), CPU build: "
            f"{not fw.get('cuda', False)}, oneDNN (MKLDNN): {fw.get('mkldnn', '?')}",
            f"paddle.utils.run_check(): {fw.get('run_check', '?')}",
            f"OS: {_os(f)}", f"Python: {f.get('python', '?')}", f"CPU: {_cpu(f)}", *_settings(f)]


def _tvm(f: Facts, latest: str) -> list[str]:
    fw = f.get("framework", {})
    return [f"Operating System: {_os(f)}", f"TVM version: {fw.get('version', '?')} (git {fw.get('git', '?')}, "
            f"LLVM {fw.get('llvm', '?')}), installed from PyPI ({_versions(f, 'apache-tvm')})",
            f"Target: {fw.get('target', 'llvm')}", f"Python: {f.get('python', '?')}", f"CPU: {_cpu(f)}", *_settings(f)]


def _iree(f: Facts, latest: str) -> list[str]:
    fw = f.get("framework", {})
    return [f"Version information: {_versions(f)}", f"iree-compile --version: {fw.get('compile_version', '?')}",
            "Component: Compiler (llvm-cpu)", f"OS: {_os(f)}", f"Python: {f.get('python', '?')}",
            f"CPU: {_cpu(f)}", *_settings(f)]


def _openvino(f: Facts, latest: str) -> list[str]:
    fw = f.get("framework", {})
    return [f"OpenVINO Version: {f.get('versions', {}).get('openvino', '?')}",
            f"Operating System: Other ({_os(f)})", "Device used for inference: CPU", "Framework: ONNX",
            "Model used: built inline in the snippet", f"CPU inference precision: {fw.get('precision', '?')}",
            f"CPU: {_cpu(f)}", *_settings(f)]


def _onnxruntime(f: Facts, latest: str) -> list[str]:
    return ["Platform: Linux", f"OS Version: {_os(f)}", "ONNX Runtime Installation: Released Package",
            f"ONNX Runtime Version: {f.get('versions', {}).get('onnxruntime', '?')}", "ONNX Runtime API: Python",
            "Architecture: X64", "Execution Provider: Default CPU", f"CPU: {_cpu(f)}", *_settings(f)]


def _onnx(f: Facts, latest: str) -> list[str]:
    return [f"OS Platform and Distribution: {_os(f)}", f"ONNX version: {f.get('versions', {}).get('onnx', '?')}",
            f"Python version: {f.get('python', '?')}", f"Protobuf version: {f.get('versions', {}).get('protobuf', '?')}",
            f"Other versions: {_versions(f)}", *_settings(f)]


def _generic(f: Facts, latest: str) -> list[str]:
    return [f"Versions: {_versions(f)}", f"OS: {_os(f)}", f"Python: {f.get('python', '?')}", f"CPU: {_cpu(f)}",
            *_settings(f)]


FORMS: dict[str, tuple[str, Callable[[Facts, str], list[str]]]] = {  # tracker -> (caption, lines)
    "pytorch/pytorch": ("Versions (python -m torch.utils.collect_env, essentials)", _torch),
    "pytorch/executorch": ("Versions (python -m torch.utils.collect_env, essentials)", _torch),
    "pytorch/ao": ("Versions (python -m torch.utils.collect_env, essentials)", _torch),
    "tensorflow/tensorflow": ("System information", _tensorflow),
    "google-ai-edge/LiteRT": ("System information", _litert),
    "keras-team/keras": ("System information", _keras),
    "PaddlePaddle/Paddle": ("Environment", _paddle),
    "apache/tvm": ("Environment", _tvm),
    "iree-org/iree": ("Version information", _iree),
    "openvinotoolkit/openvino": ("Environment", _openvino),
    "microsoft/onnxruntime": ("System information", _onnxruntime),
    "onnx/onnx": ("System information", _onnx),
}


def environment_block(tracker: str, facts: Facts, latest: str = "") -> Block:
    """The environment, as `tracker`'s template asks for it (a generic list for trackers without one)."""
    caption, form = FORMS.get(tracker, ("Environment", _generic))
    return Block(caption, "text", "\n".join(form(facts, latest)))
