"""IREE: the ONNX model imported by iree-import-onnx, compiled by iree-compile for llvm-cpu, run by the IREE
runtime (backend), one module per step (compile, runtime), batched builds (batch), the target CPU (facts)."""
