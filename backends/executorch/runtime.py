"""Running an ExecuTorch program with the Python runtime (`executorch.runtime.Runtime`), and the live facts of it.

The runtime's `Method` keeps neither its `Program` nor the program's bytes alive: a chained
`Runtime.get().load_program(pte).load_method("forward")` leaves the method pointing into a freed program, and
its execute can return garbage shapes or crash. `Loaded` holds all three for the method's lifetime.

The runtime reports a failed execute as one line ("method->execute() failed with error 0x12"); why it failed is
in the C++ log it writes to stderr ("[op_convolution.cpp:363] Check failed (...)"). `run` captures that log
around the call and appends its first failure line to the message.

Host facts: XNNPACK chooses its microkernels from CPUID alone (its hardware config; no environment setting caps
it), so the CPU's flags (the `cpu_flags` fact) select them; the runtime exposes no name for the choice. What it
decides for float16 shows in the numbers, so `f16_accumulation` measures it: a 1x1 float16 conv of 2048 and
eight 1s (all weights 1), delegated to XNNPACK. Accumulated in float32, y = 2056 (exact in float16); an float16
accumulator that adds the 1s after 2048 stays at 2048 (2049 rounds to even, 2048). The probe's program is
cached like any other artefact.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from backends.base import first_line

FAILURE = re.compile(r"\[[\w.]+:\d+\]\s*(.*(?:Check failed|[Ff]ailed|[Ee]rror|[Ii]nvalid|[Uu]nsupported|[Nn]ot).*)")
F16_EXACT, F16_ACCUMULATED = 2056.0, 2048.0


class RuntimeFailure(Exception):
    """The runtime refused to load or execute a program: its exception line plus the log's reason."""


class Loaded:
    """A program loaded by the runtime, with its bytes and its `forward` method kept alive together."""

    def __init__(self, pte: bytes, method: str = "forward") -> None:
        from executorch.runtime import Runtime

        self.pte = pte  # the runtime reads the program from these bytes: they must outlive it
        with captured_log() as log:
            try:
                self.program = Runtime.get().load_program(pte)
                self.method = self.program.load_method(method)
            except Exception as exc:  # noqa: BLE001 - the runtime refused the program
                raise RuntimeFailure(reason(exc, log())) from None

    def run(self, args: Sequence[Any]) -> list[Any]:
        with captured_log() as log:
            try:
                return list(self.method.execute(list(args)))
            except Exception as exc:  # noqa: BLE001 - the runtime refused to execute it
                raise RuntimeFailure(reason(exc, log())) from None


def reason(exc: BaseException, log: str) -> str:
    """The exception's first line, then the first failure line of the runtime's log (if any)."""
    found = [m.group(1).strip() for m in FAILURE.finditer(log)]
    found = [f for f in found if f and not f.startswith("Failed to open")]  # cpuinfo's probing of /sys files
    return f"{first_line(exc)}: {found[0]}" if found else first_line(exc)


@contextlib.contextmanager
def captured_log() -> Iterator[Any]:
    """Redirect file descriptor 2 (where the C++ runtime logs) to a temporary file; yields a function that
    returns what was written so far. The previous stderr is restored afterwards."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)

        def read() -> str:
            tmp.flush()
            tmp.seek(0)
            return tmp.read().decode(errors="replace")

        try:
            yield read
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def threads() -> int:
    """The runtime's threadpool size (XNNPACK's delegate runs on it)."""
    from executorch.extension.pybindings import portable_lib

    return int(portable_lib._threadpool_get_thread_count())


def f16_probe_program() -> bytes:
    """The probe's program: a 1x1 float16 conv1d, 9 channels in, 1 out, no bias, weights 1, to XNNPACK."""
    import torch

    from backends.executorch.program import export_and_lower

    conv = torch.nn.Conv1d(9, 1, 1, bias=False, dtype=torch.float16)
    with torch.no_grad():
        conv.weight.fill_(1.0)
    pte, _ = export_and_lower(conv.eval(), (probe_input(),), delegate=True)
    return pte


def probe_input() -> Any:
    import torch

    x = torch.ones(1, 9, 1, dtype=torch.float16)
    x[0, 0, 0] = 2048.0
    return x


def f16_accumulation(pte: bytes) -> str:
    """'f32' (y = 2056), 'f16' (y = 2048), 'y=<value>' or 'rejected (<reason>)' for the probe's program."""
    try:
        y = float(np.asarray(Loaded(pte).run([probe_input()])[0].float()).ravel()[0])
    except Exception as exc:  # noqa: BLE001 - a refusal is the answer
        return f"rejected ({str(exc)[:80]})"
    return {F16_EXACT: "f32", F16_ACCUMULATED: "f16"}.get(y, f"y={y:g}")

