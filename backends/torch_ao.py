"""torch.ao quantized engines and PT2E: being written (issue 25). Until then every case answers unsupported."""

from __future__ import annotations

from backends.base import Backend, Output, Unsupported
from harness.model.case import Case
from harness.numerics.inputs import Inputs


class TorchAoBackend(Backend):
    framework = "torch"
    devices = ("cpu",)
    engine = ""

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        raise Unsupported(f"{self.name}: adapter not written yet")


class TorchAoX86Backend(TorchAoBackend):
    name, engine = "torch-ao-x86", "x86"


class TorchAoFbgemmBackend(TorchAoBackend):
    name, engine = "torch-ao-fbgemm", "fbgemm"


class TorchAoOnednnBackend(TorchAoBackend):
    name, engine = "torch-ao-onednn", "onednn"


class TorchAoQnnpackBackend(TorchAoBackend):
    name, engine = "torch-ao-qnnpack", "qnnpack"


class TorchPt2eBackend(TorchAoBackend):
    name = "torch-pt2e"
