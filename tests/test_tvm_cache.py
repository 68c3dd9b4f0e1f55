"""TVM compile cache writes: ld-linked libraries run like the JIT, and `second` defers writes.

TVM runs in a script of its own (frameworks never load in the test process), forked from the TVM paths'
template (tests/helpers.py run_named_scripts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_named_scripts

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r'''
import json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, @ROOT@)
import tvm
from tvm import relax
from backends.tvm.cache import CompileCache

def build():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape=(1, 2, 5, 5), dtype="float16"))
    w = relax.Var("w", relax.TensorType(shape=(3, 2, 3, 3), dtype="float16"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.nn.conv2d(x, w, padding=1)))
        bb.emit_func_output(out)
    return tvm.compile(bb.get(), target="llvm")

rng = np.random.default_rng(0)
x = rng.integers(-3, 4, (1, 2, 5, 5)).astype("float16")
w = rng.integers(-3, 4, (3, 2, 3, 3)).astype("float16")

def run(mod):
    return relax.VirtualMachine(mod, tvm.cpu(0))["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()

root, policy = Path(@CACHE@), @POLICY@
jit = run(build())
steps = []
for _ in range(3):
    cache = CompileCache(root, policy=policy)
    mod, hit = cache.get_or_build("k" * 32, build)
    steps.append({"hit": hit, "files": sorted(p.name for p in root.iterdir()) if root.exists() else [],
                  "same_as_jit": bool(np.array_equal(run(mod), jit)), "deferred": cache.stats.deferred})
print("STEPS", json.dumps(steps))
'''


def cache_steps(tmp_path: Path, policy: str) -> list[dict]:
    script = (SCRIPT.replace("@ROOT@", repr(str(ROOT))).replace("@CACHE@", repr(str(tmp_path / "tvm")))
              .replace("@POLICY@", repr(policy)))
    [(code, output)] = run_named_scripts([(f"cache_{policy}", script)], tmp_path)
    if code != 0 and "No module named 'tvm'" in output:
        pytest.skip("TVM is not installed")
    assert code == 0, output[-2000:]
    return json.loads(next(ln for ln in output.splitlines() if ln.startswith("STEPS ")).removeprefix("STEPS "))


def test_always_writes_on_first_build_and_runs_the_written_library(tmp_path: Path) -> None:
    steps = cache_steps(tmp_path, "always")
    assert [s["hit"] for s in steps] == [False, True, True]
    assert steps[0]["files"] == ["k" * 32 + ".so"]
    assert all(s["same_as_jit"] for s in steps)  # float16 exercises the half-precision helpers


def test_second_sighting_writes_only_the_second_time(tmp_path: Path) -> None:
    steps = cache_steps(tmp_path, "second")
    assert [s["hit"] for s in steps] == [False, False, True]
    assert steps[0]["files"] == ["k" * 32 + ".seen"] and steps[0]["deferred"] == 1
    assert steps[1]["files"] == ["k" * 32 + ".so"]  # marker replaced by the library
    assert all(s["same_as_jit"] for s in steps)


MECHANICS = {"backends.base", "backends.artifacts", "backends.digest", "backends.registry"}  # not the model


def test_each_adapters_cache_key_covers_the_code_that_writes_its_model() -> None:
    """A TVM importer builds from a model another family's code writes (torch's module, the ONNX graph, TF's
    function). Every backends module outside the TVM family and the run's mechanics whose objects an adapter's
    own modules import is in the sources that key its cache (digest_modules): an edit there must not replay
    builds of the old model, as an edit of backends/torch/module.py once did for tvm-torch-import."""
    import inspect
    import sys

    from backends.tvm.bound import TvmBoundBackend
    from backends.tvm.direct import TvmBackend, digest_modules
    from backends.tvm.onnx_import import TvmOnnxImportBackend, TvmOnnxOutputShapeBackend
    from backends.tvm.tflite_import import TvmTfliteImportBackend
    from backends.tvm.torch_import import TvmTorchImportBackend

    for cls in (TvmBackend, TvmBoundBackend, TvmTorchImportBackend, TvmOnnxImportBackend, TvmOnnxOutputShapeBackend,
                TvmTfliteImportBackend):
        own = {k.__module__ for k in cls.__mro__ if k.__module__.startswith("backends.tvm")}
        used = set()
        for name in own:
            for value in vars(sys.modules[name]).values():
                module = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
                if isinstance(module, str) and module.startswith("backends.") and not module.startswith("backends.tvm"):
                    used.add(module)
        missing = used - MECHANICS - set(digest_modules(cls))
        assert not missing, (cls.__name__, sorted(missing))
