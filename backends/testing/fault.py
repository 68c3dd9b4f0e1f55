"""`fault:<mode>`: a test double that misbehaves on purpose, to prove the runner survives.

It computes its answers with the NumPy oracle (no framework), then injects the fault. The `build_*`
modes fail while building the case's artefact through backends/artifacts.py's cache, as a converter
that aborts (paddle2onnx) or hangs does. `oom` asks NumPy for an array no machine has (4 EiB) and wraps the
MemoryError in Rejected, as an adapter that turns every framework exception into a refusal does.
`hang_once` stalls on a case's first run only (a marker per case under $CONVDIFF_FAULT_STATE): the stall a
loaded machine causes, which a retry on a fresh worker must not report as a timeout. `stale_after_refusal`
refuses a case whose id starts with "refuse", and its process then adds 1 to every later output, as
paddle.inference applies a refused model's fused activation to the next predictor's conv: the adapter's
`stale_after_refusal` has the harness replace the worker after each refusal, so later answers stay right.
`stale_after_run` answers a case whose id starts with "corrupt" right, and its process then adds 1 to every later
output, as a kernel that writes past its output buffer leaves the heap for the next case (torch-ao-qnnpack's
ConvTranspose3d): the adapter's `stale_after_run` has the harness replace the worker after such a case.
"""

from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from backends.artifacts import ArtifactCache, case_key
from backends.base import Backend, Capabilities, Output, Rejected, first_line
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.inputs import Inputs
from harness.numerics.oracle import reference

FAULT_MODES = ("segfault", "abort", "hang", "hang_once", "exception", "oom", "wrong_shape", "nan", "build_abort", "build_hang",
               "stale_after_refusal", "stale_after_run")
STALE = {"refused": False}  # whether this process refused (stale_after_refusal) or ran a "corrupt" case (stale_after_run)


class FaultBackend(Backend):
    framework = "numpy"
    devices = ("cpu",)
    test_only = True
    capabilities = Capabilities(devices=("cpu",))
    epilogue_ops = EPILOGUE_OPS  # it answers with the oracle's own output

    def __init__(self, mode: str) -> None:
        if mode not in FAULT_MODES:
            raise ValueError(f"unknown fault mode '{mode}' (known: {', '.join(FAULT_MODES)})")
        self.mode = mode
        self.name = f"fault:{mode}"

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        if self.mode.startswith("build_"):  # builds nothing it could return: it aborts or hangs first
            ArtifactCache("fault-build").fetch(case_key(case, inputs, {"fault": self.mode}), self.fail_build, first_line)
        if self.mode == "segfault":
            ctypes.string_at(0)  # reads address 0: SIGSEGV
        if self.mode == "abort":
            os.abort()
        if self.mode == "hang_once" and _first_sighting(case):
            time.sleep(3600)  # a stall that does not come back: the first run of each case only
        if self.mode == "hang":
            time.sleep(3600)
        if self.mode == "exception":
            raise RuntimeError("injected fault: adapter raised")
        if self.mode == "oom":
            try:
                np.empty(1 << 59)  # 4 EiB: beyond any address space, so refused even where memory is overcommitted
            except Exception as exc:  # the adapter pattern under test: every exception a refusal
                raise Rejected(first_line(exc)) from exc
        if self.mode == "stale_after_refusal" and case.id.startswith("refuse"):
            STALE["refused"] = True
            raise Rejected("injected fault: refused, and the process keeps a stale state")
        ref = reference(case, inputs.x, inputs.w, inputs.b, inputs.epilogue)[0]
        out = ref.astype(inputs.x.dtype) + (1 if STALE["refused"] else 0)
        if self.mode == "stale_after_run" and case.id.startswith("corrupt"):
            STALE["refused"] = True  # this answer is right; the process is not, from here on
        if self.mode == "wrong_shape":
            out = np.concatenate([out, out[..., -1:]], axis=-1)
        if self.mode == "nan":
            out.reshape(-1)[0] = np.nan
        return Output(out, case.dtype, f"oracle, then inject {self.mode}")

    def stale_after_refusal(self, case: Case) -> bool:
        return self.mode == "stale_after_refusal"

    def stale_after_run(self, case: Case) -> bool:
        return self.mode == "stale_after_run" and case.id.startswith("corrupt")

    def fail_build(self) -> dict[str, bytes]:
        if self.mode == "build_abort":
            os.abort()
        time.sleep(3600)
        return {}


def _first_sighting(case: Case) -> bool:
    """True the first time this case reaches any `fault:hang_once` worker under $CONVDIFF_FAULT_STATE (a
    directory shared by the run's workers; without it, every time): a marker file per case id."""
    state = os.environ.get("CONVDIFF_FAULT_STATE")
    if not state:
        return True
    try:
        fd = os.open(os.path.join(state, f"seen-{case.id}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True

