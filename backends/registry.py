"""Backend names -> adapter objects. Modules are imported on demand; frameworks only in workers."""

from __future__ import annotations

import importlib

from backends.base import Backend

# name -> "module:Class"; variants of one framework sit in the framework's module.
REAL_BACKENDS: dict[str, str] = {
    "torch": "backends.torch_backend:TorchBackend",
    "tensorflow": "backends.tensorflow_backend:TensorFlowBackend",
    "tensorflow-keras": "backends.keras_backend:KerasBackend",
    "tvm": "backends.tvm.direct:TvmBackend",
    "tvm-bound": "backends.tvm.bound:TvmBoundBackend",
    "tvm-torch-import": "backends.tvm.torch_import:TvmTorchImportBackend",
    "tvm-onnx-import": "backends.tvm.onnx_import:TvmOnnxImportBackend",
    "tvm-onnx-import-output-shape": "backends.tvm.onnx_import:TvmOnnxOutputShapeBackend",
    "tvm-tflite-import": "backends.tvm.tflite_import:TvmTfliteImportBackend",
    "paddle": "backends.paddle_backend:PaddleBackend",
    "paddle-output-size": "backends.paddle_backend:PaddleOutputSizeBackend",
    "jax": "backends.jax_backend:JaxBackend",
    "onnxruntime": "backends.onnx.onnxruntime_backend:OnnxRuntimeBackend",
    "onnxruntime-qdq": "backends.onnx.onnxruntime_backend:OnnxRuntimeQdqBackend",
    "openvino": "backends.onnx.openvino_backend:OpenVinoBackend",
    "torch-onnx-ort": "backends.onnx.torch_onnx_ort:TorchOnnxOrtBackend",
    "tf2onnx-ort": "backends.onnx.tf2onnx_ort:Tf2OnnxOrtBackend",
    "paddle2onnx-ort": "backends.onnx.paddle2onnx_ort:Paddle2OnnxOrtBackend",
    # the deployed paths: compiled, graph-mode and inference-engine runs of the conv and its epilogue
    "torch-inductor": "backends.torch_inductor:TorchInductorBackend",
    "tensorflow-graph": "backends.tf_graph:TensorFlowGraphBackend",
    "tf-xla": "backends.tf_graph:TfXlaBackend",
    "jax-jit": "backends.jax_jit:JaxJitBackend",
    "paddle-inference": "backends.paddle_inference:PaddleInferenceBackend",
    "litert": "backends.litert:LiteRtBackend",
    "litert-ref": "backends.litert:LiteRtRefBackend",
    # quantized (uint8/int8) convolution: torch.ao under each quantized engine, and PT2E
    "torch-ao-x86": "backends.torch_ao:TorchAoX86Backend",
    "torch-ao-fbgemm": "backends.torch_ao:TorchAoFbgemmBackend",
    "torch-ao-onednn": "backends.torch_ao:TorchAoOnednnBackend",
    "torch-ao-qnnpack": "backends.torch_ao:TorchAoQnnpackBackend",
    "torch-pt2e": "backends.torch_pt2e:TorchPt2eBackend",
}
TEST_PREFIXES = {
    "fault": "backends.testing.fault:FaultBackend",
    "mutant": "backends.testing.mutants:MutantBackend",
}


class UnknownBackend(ValueError):
    pass


def _load(spec: str):
    module, cls = spec.split(":")
    return getattr(importlib.import_module(module), cls)


def get_backend(name: str) -> Backend:
    """An adapter object for a backend name (`torch`, `fault:segfault`, `mutant:flip_kernel`, ...)."""
    if name in REAL_BACKENDS:
        return _load(REAL_BACKENDS[name])()
    prefix, _, arg = name.partition(":")
    if prefix in TEST_PREFIXES and arg:
        try:
            return _load(TEST_PREFIXES[prefix])(arg)
        except ValueError as exc:
            raise UnknownBackend(str(exc)) from None
    known = ", ".join([*REAL_BACKENDS, *(f"{p}:<mode>" for p in TEST_PREFIXES)])
    raise UnknownBackend(f"unknown backend '{name}' (known: {known})")


def parse_backends(text: str) -> list[str]:
    """Validate a comma-separated list; raises UnknownBackend."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UnknownBackend("no backend named")
    for n in names:
        get_backend(n)
    return list(dict.fromkeys(names))


def installed_backends() -> list[str]:
    """Real backends whose framework is importable (checked without importing it)."""
    return [n for n in REAL_BACKENDS if get_backend(n).unavailable_reason() is None]
