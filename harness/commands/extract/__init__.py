"""`convdiff extract`: the convolutions a real model runs, as one case file.

MODEL is an ONNX file, a Keras `.keras` file, or `package.module:callable` returning a torch
`nn.Module` or a Keras model. Each framework is imported only in its own probe subprocess
(`python -m harness.commands.extract.<framework>_probe`), which returns plain JSON layer records; this
side merges identical layers, writes the cases and checks each one against the output size
the framework produced (writer.py).
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
from harness.commands.extract.writer import ExtractError, check, merge, override, render

FRAMEWORKS = ("onnx", "torch", "keras")

# Which framework a `module:callable` uses: import it (nothing else) in a clean process and look.
_DETECT = """
import importlib, sys
mod, _, attr = sys.argv[1].partition(":")
obj = importlib.import_module(mod)
for part in attr.split("."):
    obj = getattr(obj, part)
print(",".join(n for n in ("torch", "keras") if n in sys.modules))
"""


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


def framework_of(model: str, framework: str | None) -> str:
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
    proc = subprocess.run([sys.executable, "-c", _DETECT, model], capture_output=True, text=True, env=_env())
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise ExtractError(f"cannot import '{model}': {last}")
    found = [n for n in proc.stdout.strip().split(",") if n]
    if len(found) != 1:
        raise ExtractError(f"'{model}': cannot tell torch from keras (imports {found or 'neither'}); give --framework")
    return found[0]


def _env() -> dict[str, str]:
    """The probe's environment: the working directory importable (for module:callable)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.setdefault("KERAS_BACKEND", "tensorflow")
    return env


def probe(framework: str, model: str, input_shape: list[int] | None, run: bool = False) -> list[LayerConv]:
    """Run one framework's probe in its own process and return its layer records."""
    if framework not in FRAMEWORKS:
        raise ExtractError(f"unknown framework '{framework}' (known: {', '.join(FRAMEWORKS)})")
    if framework == "onnx" and not Path(model).exists():
        raise ExtractError(f"{model}: no such file")
    with tempfile.TemporaryDirectory(prefix="convdiff-extract-") as d:
        args, out = Path(d) / "args.json", Path(d) / "layers.json"
        model_arg = str(Path(model).resolve()) if Path(model).exists() else model
        args.write_text(json.dumps({"model": model_arg, "input_shape": input_shape, "run": run}))
        proc = subprocess.run([sys.executable, "-m", f"harness.commands.extract.{framework}_probe", str(args), str(out)],
                              capture_output=True, text=True, env=_env())
        if proc.returncode == 2:
            raise ExtractError(f"{model}: " + proc.stderr.strip().splitlines()[-1].removeprefix("convdiff-extract: "))
        if proc.returncode or not out.exists():
            tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
            raise ExtractError(f"the {framework} probe failed (exit {proc.returncode}):\n{tail}")
        return [LayerConv.from_json(d) for d in json.loads(out.read_text())]


def extract(model: str, input_shape: list[int] | None = None, *, framework: str | None = None,
            batch: int | None = None, dtype: str | None = None, name: str | None = None,
            notes: list[str] = (), command: str = "", run: bool = False) -> Extraction:
    """The model's convolutions, merged and written as checked case-file text."""
    fw = framework_of(model, framework)
    layers = override(probe(fw, model, input_shape, run), batch, dtype)
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
