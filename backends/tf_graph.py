"""tensorflow-graph: being written (issue 24). Until then every case answers unsupported."""

from __future__ import annotations

from backends.base import Backend, Output, Unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class TensorFlowGraphBackend(Backend):
    name = "tensorflow-graph"
    framework = "tensorflow"
    devices = ("cpu",)

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        raise Unsupported("tensorflow-graph: adapter not written yet")


class TfXlaBackend(TensorFlowGraphBackend):
    name = "tf-xla"
