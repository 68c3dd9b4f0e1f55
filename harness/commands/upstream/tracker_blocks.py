"""What a tracker asks for beside the Python, generated from the witness case in a fresh interpreter.

iree-org/iree (and llvm/torch-mlir, whose ONNX importer IREE runs) asks for the input IR and the commands run:
the model as `iree-import-onnx` writes it (model.mlir, built by the iree adapter's own ONNX builder) and the
`iree-compile` command line with the adapter's flags. apache/tvm reads Relax: the module the TVM adapter builds,
as `mod.script()` prints it. Each is made in a child process, so this process never imports a framework.
"""

from __future__ import annotations

import json
import subprocess
import sys

from harness.commands.upstream.witness import Witness
from reports.upstream.model import Block

IREE_TRACKERS = ("iree-org/iree", "llvm/torch-mlir")
TVM_TRACKERS = ("apache/tvm",)
COMPILE = "iree-compile model.mlir {flags} -o model.vmfb"

_PROGRAM = r'''
import json, sys
import numpy as np
from harness.model.build import make_case
kind, backend, fields = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
case = make_case(**fields)
if kind == "iree":
    from backends.iree.compile import import_models
    from backends.onnx.model import build_model, node_attributes
    rng = np.random.default_rng(0)
    w = rng.integers(-3, 4, case.weight_shape).astype(case.dtype)
    b = rng.integers(-3, 4, (case.out_channels,)).astype(case.dtype) if case.bias else None
    print(import_models([("main", build_model(case, w, b, node_attributes(case)[0]))]))
else:
    from backends.registry import get_backend
    adapter = get_backend(backend)
    adapter.setup("cpu")
    print(adapter.build(case, "cpu")[0]().script())
'''


def _child(kind: str, w: Witness, timeout: float) -> str:
    fields = {k: v for k, v in w.case.params().items() if k != "tags"}
    fields.update(id=w.case.id, file=w.case.file)
    proc = subprocess.run([sys.executable, "-c", _PROGRAM, kind, w.backend, json.dumps(fields)], capture_output=True,
                          text=True, timeout=timeout)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def tracker_blocks(tracker: str, w: Witness | None, timeout: float = 300.0) -> list[Block]:
    """The blocks `tracker` wants beside the snippet ([] for the others, or where the witness gives none)."""
    if w is None or w.case.quantized or w.case.epilogue or w.case.geometry is None:
        return []
    if tracker in IREE_TRACKERS and w.backend == "iree":
        from backends.iree.compile import TARGET_FLAGS

        mlir = _child("iree", w, timeout)
        if not mlir:
            return []
        return [Block("The model as iree-import-onnx writes it (model.mlir)", "mlir", mlir),
                Block("Compiled with", "sh", COMPILE.format(flags=" ".join(TARGET_FLAGS)))]
    if tracker in TVM_TRACKERS and w.backend in ("tvm", "tvm-bound"):
        script = _child("tvm", w, timeout)
        return [Block("The Relax module (mod.script())", "python", script)] if script else []
    return []
