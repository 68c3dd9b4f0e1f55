"""paddle-inference: being written (issue 24). Until then every case answers unsupported."""

from __future__ import annotations

from backends.base import Backend, Output, Unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class PaddleInferenceBackend(Backend):
    name = "paddle-inference"
    framework = "paddle"
    devices = ("cpu",)

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        raise Unsupported("paddle-inference: adapter not written yet")
