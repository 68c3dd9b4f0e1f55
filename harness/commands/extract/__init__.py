"""`convdiff extract`: the convolutions a real model runs, as one case file.

MODEL is an ONNX file, a Keras `.keras` file, or `package.module:callable` returning a torch
`nn.Module` or a Keras model. Each framework is imported only in its own probe subprocess
(`python -m harness.commands.extract.<framework>_probe`, or `auto_probe` for a `module:callable`: it
imports the model first, sees which framework that imported, and runs that probe), which returns plain
JSON layer records; this side merges identical layers, writes the cases and checks each one against the
output size the framework produced (writer.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.commands.extract.layer import LayerConv
from harness.commands.extract.probe_io import IMPORT_FAILED, NOT_ONE
from harness.commands.extract.writer import ExtractError, check, merge, override, render

FRAMEWORKS = ("onnx", "torch", "keras")

@dataclass
class Extraction:
    layers: list[LayerConv]
    text: str
    framework: str

    @property
    def distinct(self) -> int:
        return len(merge(self.layers))


def parse_shape(text: str | None) -> list[int] | None:
    """'1,3,224,224' -> [1, 3, 224, 224]; raises ExtractError on anything else."""
    if text is None:
        return None
    try:
        shape = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise ExtractError(f"--input-shape: expected comma-separated integers such as 1,3,224,224, got '{text}'") from None
    if not shape or min(shape) < 1:
        raise ExtractError(f"--input-shape: every dimension must be >= 1, got '{text}'")
    return shape


def framework_of(model: str, framework: str | None) -> str | None:
    """The framework named or implied by the file's suffix; None for a `module:callable` (the auto probe
    finds it)."""
    if framework:
        return framework
    suffix = Path(model).suffix.lower()
    if suffix == ".onnx":
        return "onnx"
    if suffix in (".keras", ".h5"):
        return "keras"
    if ":" not in model:
        if not Path(model).exists():
            raise ExtractError(f"{model}: no such file, and not a package.module:callable")
        raise ExtractError(f"{model}: not an .onnx or .keras file, nor a package.module:callable")
    return None


def _env() -> dict[str, str]:
    """The probe's environment: the working directory importable (for module:callable)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.setdefault("KERAS_BACKEND", "tensorflow")
    return env


def probe(framework: str | None, model: str, input_shape: list[int] | None,
          run: bool = False) -> tuple[str, list[LayerConv]]:
    """Run one framework's probe in its own process: (the framework, its layer records). None: a
    `module:callable` whose framework the probe process finds itself (auto_probe.py)."""
    if framework is not None and framework not in FRAMEWORKS:
        raise ExtractError(f"unknown framework '{framework}' (known: {', '.join(FRAMEWORKS)})")
    if framework == "onnx" and not Path(model).exists():
        raise ExtractError(f"{model}: no such file")
    with tempfile.TemporaryDirectory(prefix="convdiff-extract-") as d:
        args, out = Path(d) / "args.json", Path(d) / "layers.json"
        model_arg = str(Path(model).resolve()) if Path(model).exists() else model
        args.write_text(json.dumps({"model": model_arg, "input_shape": input_shape, "run": run}))
        module = "auto_probe" if framework is None else f"{framework}_probe"
        returncode, stderr = _run_probe(framework, f"harness.commands.extract.{module}", (str(args), str(out)), Path(d))
        if framework is None:
            framework = _found(model, returncode, stderr, Path(f"{out}.frameworks"))
        if returncode == 2:
            raise ExtractError(f"{model}: " + stderr.strip().splitlines()[-1].removeprefix("convdiff-extract: "))
        if returncode or not out.exists():
            tail = "\n".join(stderr.strip().splitlines()[-15:])
            raise ExtractError(f"the {framework} probe failed (exit {returncode}):\n{tail}")
        return framework, [LayerConv.from_json(d) for d in json.loads(out.read_text())]


# The backend whose zygote a probe may fork from: its template imports the probe's framework and nothing
# the probe does not import itself (torch's: torch and its own submodules; tensorflow-keras's: TensorFlow
# and Keras). The auto probe never forks: it finds the framework by what the model's module imports.
PROBE_TEMPLATES = {"torch": "torch", "keras": "tensorflow-keras"}


def _run_probe(framework: str | None, module: str, argv: tuple[str, ...], tmp: Path) -> tuple[int, str]:
    """Run `python -m module argv...` in the probe's environment: its exit status and its output. Inside an
    xdist session (make test) a fork of the session's zygote for the framework, which has imported it
    already (harness/execution/zygote.py `session_zygote`); elsewhere, or if that fork cannot be made, a
    fresh interpreter. The fork runs the module as the interpreter would (scripts.run_as_main)."""
    backend = PROBE_TEMPLATES.get(framework or "")
    if backend is not None:
        from harness.execution.preloads import preload, templates
        from harness.execution.zygote import session_zygote

        zygote = session_zygote(preload(backend), templates())
        if zygote is not None:
            log = tmp / "probe.log"
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                proc = zygote.fork_script(module, fd, _env(), argv, module=True)
            finally:
                os.close(fd)
            if proc is not None:
                return proc.wait(), log.read_text(errors="replace")
    done = subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True, env=_env())
    return done.returncode, done.stderr


def _found(model: str, returncode: int, stderr: str, frameworks: Path) -> str:
    """The framework the auto probe found the model to import, or the ExtractError saying why none."""
    if returncode == IMPORT_FAILED:
        last = (stderr.strip().splitlines() or ["failed"])[-1]
        raise ExtractError(f"cannot import '{model}': {last}")
    if not frameworks.exists():
        tail = "\n".join(stderr.strip().splitlines()[-15:])
        raise ExtractError(f"the probe failed before importing '{model}' (exit {returncode}):\n{tail}")
    found = json.loads(frameworks.read_text())
    if returncode == NOT_ONE:
        raise ExtractError(f"'{model}': cannot tell torch from keras (imports {found or 'neither'}); give --framework")
    return found[0]


def extract(model: str, input_shape: list[int] | None = None, *, framework: str | None = None,
            batch: int | None = None, dtype: str | None = None, name: str | None = None,
            notes: list[str] = (), command: str = "", run: bool = False) -> Extraction:
    """The model's convolutions, merged and written as checked case-file text."""
    fw, layers = probe(framework_of(model, framework), model, input_shape, run)
    layers = override(layers, batch, dtype)
    if not layers:
        raise ExtractError(f"'{model}': the {fw} model runs no convolution")
    groups = merge(layers)
    label = name or Path(model.split(":")[-1]).stem
    header = [f"Convolutions of {label}, extracted by `{command or 'convdiff extract ' + model}`",
              f"({fw}{', input ' + 'x'.join(map(str, input_shape)) if input_shape else ''}).", *notes,
              "Identical layers are one case; the comment above each case names its layers."]
    text = render(groups, label, header)
    check(text, groups, layers)
    return Extraction(layers, text, fw)
