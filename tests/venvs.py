"""Fresh installs of convdiff, as a user makes them: a copy of the working tree, a new virtualenv, pip.

`fresh_install(dest, extra)` copies the files git tracks (and untracked ones it does not ignore) to
`dest/src`, as a clean clone has them, creates `dest/venv` and runs the README's command there:
`pip install -c constraints.txt -e 'src[extra]'` (the package index as pip is configured on the machine).
Used by tests/test_install_matrix.py and bench/workflow_jobs.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# extra -> the backends its install must make usable: that family's smoke run (the base install: none, it
# only reports). Every extra of pyproject.toml's [project.optional-dependencies] but `all` and `dev`.
FAMILIES: dict[str, tuple[str, ...]] = {
    "": (),
    "onnx": ("onnxruntime", "onnxruntime-qdq"),
    "torch": ("torch", "torch-inductor", "torch-ao-x86", "torch-ao-fbgemm", "torch-ao-onednn", "torch-ao-qnnpack"),
    "tensorflow": ("tensorflow", "tensorflow-keras", "tensorflow-graph", "tf-xla"),
    "paddle": ("paddle", "paddle-output-size", "paddle-inference"),
    "tvm": ("tvm", "tvm-bound", "tvm-onnx-import", "tvm-onnx-import-output-shape", "tvm-tflite-import"),
    "jax": ("jax", "jax-jit"),
    "openvino": ("openvino",),
    "converters": ("torch-onnx-ort", "tf2onnx-ort", "paddle2onnx-ort"),
    "litert": ("litert", "litert-ref"),
    "quant": ("torch-pt2e",),
    "executorch": ("executorch", "executorch-portable"),
    "iree": ("iree", "iree-qlinear"),
    "models": ("torch",),
}


@dataclass
class Install:
    src: Path
    venv: Path
    seconds: float
    log: str

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def size_mb(self) -> float:
        return sum(p.stat().st_size for p in self.venv.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20

    def convdiff(self, *args: str, cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / "convdiff"), *args], cwd=cwd or self.src, capture_output=True,
                              text=True, timeout=timeout, env=self.env())

    def env(self) -> dict[str, str]:
        from tests.gha import path_env

        return path_env(self.venv)


def copy_tree(dest: Path) -> Path:
    """The working tree as a clean clone holds it: tracked files and untracked ones git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, listed):
        src = ROOT / rel.decode()
        if src.is_file():
            target = dest / rel.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


def fresh_install(dest: Path, extra: str, timeout: float = 1800) -> Install:
    """`pip install -c constraints.txt -e '.[extra]'` of a copy of the tree in a new virtualenv under `dest`."""
    src = copy_tree(dest / "src")
    venv = dest / "venv"
    start = time.monotonic()
    subprocess.run([sys.base_prefix + "/bin/python3", "-m", "venv", str(venv)], check=True, timeout=120)
    spec = f"{src}[{extra}]" if extra else str(src)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           "-c", str(src / "constraints.txt"), "-e", spec],
                          capture_output=True, text=True, timeout=timeout)
    log = "\n".join(line for line in (proc.stdout + proc.stderr).splitlines() if "Location 'file:" not in line)
    if proc.returncode:
        raise RuntimeError(f"pip install -e '.[{extra}]' failed ({proc.returncode}):\n{log[-3000:]}")
    return Install(src, venv, time.monotonic() - start, log)
