"""torch-inductor: being written (issue 24). Until then every case answers unsupported."""

from __future__ import annotations

from backends.base import Backend, Output, Unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class TorchInductorBackend(Backend):
    name = "torch-inductor"
    framework = "torch"
    devices = ("cpu",)

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        raise Unsupported("torch-inductor: adapter not written yet")
