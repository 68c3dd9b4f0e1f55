"""The two IREE compiler steps, as a user runs them: `iree-import-onnx` (in process: onnx's shape inference,
then the importer that tool wraps) and `iree-compile` for llvm-cpu on the host CPU (its executable, in a child process).

Import: iree.compiler.extras.onnx_importer (torch-mlir's ONNX importer, which `iree-import-onnx` runs)
turns each ONNX graph into a `func.func` of `torch.operator "onnx.*"` ops; several graphs go into one
module as several functions (a batch), each named after its graph, their weights as uniquely named
dense resources. Compile: the iree-compile binary of the iree-base-compiler wheel, with the flags of
TARGET_FLAGS (the host CPU as target), reading the MLIR on stdin. Its input pipeline lowers the torch
dialect (ONNX -> torch -> linalg, torch-mlir's conversions inside IREE), then IREE's global
optimization, dispatch creation, stream/HAL and the llvm-cpu code generation; the configured
executables it dumps (--iree-hal-dump-executable-configurations-to) say which code generation
pipeline each dispatch got (e.g. ConvTileAndDecomposeExpert), and the target CPU and features
`host` resolved to. A child process that dies by a signal is a compiler crash; a non-zero exit is a
refusal, whose first `error:` line is the message. Nothing here imports the runtime.
"""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TARGET_FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                "--iree-llvmcpu-target-cpu=host")
COMPILE_TIMEOUT_S = 1200  # beyond any per-case timeout: the harness stops a hung build first (a timeout, not cached)
PIPELINE = re.compile(r"func\.func @([\w$]+)\(\)[^\n]*?translation_info = #iree_codegen\.translation_info<"
                      r"pipeline = #[\w.]+<(\w+)>")
ERROR_AT = re.compile(r"^<stdin>:(\d+):\d+: error:", re.MULTILINE)  # where in the input an error points
TARGET = re.compile(r'cpu = "([^"]*)", cpu_features = "([^"]*)"')
# The CPU features that change IREE's llvm-cpu kernels (vector width, f16/bf16 arithmetic, dot products)
KERNEL_FEATURES = ("sse4.2", "avx", "f16c", "fma", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512dq",
                   "avx512vnni", "avx512bf16", "avx512fp16", "avxvnni", "amx-tile", "amx-int8", "amx-bf16",
                   "amx-fp16")


CRASHED = "iree-compile crashed"  # how a compiler death by a signal's message begins (cached as that message)


class CompileFailed(Exception):
    """iree-import-onnx or iree-compile refused the model (message: the first error line), or
    iree-compile crashed (`crashed`: it died by a signal); `lines`: the input lines its errors point at."""

    def __init__(self, message: str, crashed: bool = False, lines: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.crashed = crashed
        self.lines = lines


@dataclass
class Compiled:
    """A compiled module: the .vmfb bytes, each dispatch's code generation pipeline, the resolved target."""

    vmfb: bytes
    dispatches: list[tuple[str, str]] = field(default_factory=list)  # (dispatch function, pipeline)
    target_cpu: str = ""
    features: list[str] = field(default_factory=list)  # KERNEL_FEATURES the target enables


def versions() -> dict[str, str]:
    """The installed IREE compiler and runtime distributions (the cache keys and the record name them)."""
    import importlib.metadata

    out = {}
    for dist in ("iree-base-compiler", "iree-base-runtime", "onnx"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def import_models(models: list[tuple[str, Any]]) -> str:
    """One MLIR module (text) holding one function per (function name, ONNX ModelProto), as
    iree-import-onnx writes it for one model. The importer's exceptions are refusals."""
    import onnx
    from iree.compiler import ir
    from iree.compiler.extras import onnx_importer

    context = ir.Context()
    module = None
    for name, model in models:
        model.graph.name = name
        try:
            # as iree-import-onnx does: shapes of every intermediate value (onnx's inference, data propagation
            # on), without which the importer leaves them unranked and the torch lowering refuses the nodes
            info = onnx_importer.ModelInfo(onnx.shape_inference.infer_shapes(model, data_prop=True))
            if module is None:
                module = info.create_module(context=context).operation
            onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
        except Exception as exc:  # noqa: BLE001 - the importer refused the model
            raise CompileFailed(f"iree-import-onnx: {_first(str(exc)) or type(exc).__name__}") from None
    if module is None:
        raise ValueError("no model to import")
    try:
        module.verify()
    except Exception as exc:  # noqa: BLE001 - the imported module does not verify
        raise CompileFailed(f"iree-import-onnx: {_first(str(exc))}") from None
    return module.get_asm()


def compile_mlir(asm: str, flags: tuple[str, ...] = TARGET_FLAGS) -> Compiled:
    """iree-compile on `asm` (stdin) -> .vmfb, with the dispatch pipelines and target from its dump."""
    from iree.compiler.tools.binaries import find_tool

    with tempfile.TemporaryDirectory(prefix="convdiff-iree-") as tmp:
        out, dump = Path(tmp) / "module.vmfb", Path(tmp) / "configured"
        cmd = [find_tool("iree-compile"), "-", *flags, f"--iree-hal-dump-executable-configurations-to={dump}",
               "-o", str(out)]
        try:
            done = subprocess.run(cmd, input=asm.encode(), capture_output=True, timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise CompileFailed(f"iree-compile: no result in {COMPILE_TIMEOUT_S} s") from None
        err = done.stderr.decode(errors="replace")
        if done.returncode < 0:
            name = signal.Signals(-done.returncode).name if -done.returncode in signal.valid_signals() else "?"
            raise CompileFailed(f"{CRASHED} ({name}): {crash_line(err)}", crashed=True)
        if done.returncode != 0 or not out.exists():
            lines = tuple(int(n) for n in ERROR_AT.findall(err))
            raise CompileFailed(f"iree-compile: {error_line(err) or f'exit status {done.returncode}'}", lines=lines)
        compiled = Compiled(out.read_bytes())
        for path in sorted(dump.glob("*.mlir")) if dump.is_dir() else []:
            text = path.read_text(errors="replace")
            compiled.dispatches += PIPELINE.findall(text)
            target = TARGET.search(text)
            if target and not compiled.target_cpu:
                compiled.target_cpu = target.group(1)
                compiled.features = enabled_features(target.group(2))
        return compiled


def functions_at(asm: str, lines: tuple[int, ...]) -> set[str]:
    """The names of the `func.func`s of `asm` that hold these (1-based) lines."""
    starts = [(i + 1, m.group(1)) for i, text in enumerate(asm.splitlines())
              if (m := re.match(r"\s*func\.func @([\w$]+)", text))]
    found = set()
    for line in lines:
        owner = [name for start, name in starts if start <= line]
        if owner:
            found.add(owner[-1])
    return found


def enabled_features(spec: str) -> list[str]:
    """The KERNEL_FEATURES a `+a,-b,...` feature string leaves on (a later entry overrides an earlier one)."""
    state: dict[str, bool] = {}
    for item in filter(None, spec.split(",")):
        state[item[1:]] = item[0] == "+"
    return [f for f in KERNEL_FEATURES if state.get(f)]


def error_line(stderr: str) -> str:
    """The first diagnostic of iree-compile's stderr, without its `<stdin>:line:col: error:` location."""
    for line in stderr.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return _first(stderr)


FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (.*?(?:mlir::torch|mlir::iree_compiler)::[\w:~<>]+?)(?:\(.*\))?"
                   r"(?: (\S+\.(?:cpp|h|inc)):\d+:\d+)?\s*$")


def crash_line(stderr: str) -> str:
    """What a crashed iree-compile said first: an assertion, an error or an LLVM ERROR; else the innermost frame
    of its stack dump in torch-mlir's or IREE's own code (where it crashed: a release build asserts nothing);
    else its first line."""
    for line in stderr.splitlines():
        if "Assertion" in line or "error:" in line or "LLVM ERROR" in line:
            return line.strip()
    for line in stderr.splitlines():
        frame = FRAME.match(line)
        if frame:
            return f"in {frame.group(1)}" + (f" ({frame.group(2)})" if frame.group(2) else "")
    return _first(stderr) or "no message"


def _first(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else ""
