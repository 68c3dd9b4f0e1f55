"""litert, litert-ref: being written (issue 24). Until then every case answers unsupported."""

from __future__ import annotations

from backends.base import Backend, Output, Unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class LiteRtBackend(Backend):
    name = "litert"
    framework = "ai_edge_litert"
    distribution = "ai-edge-litert"
    devices = ("cpu",)

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        raise Unsupported(f"{self.name}: adapter not written yet")


class LiteRtRefBackend(LiteRtBackend):
    name = "litert-ref"
