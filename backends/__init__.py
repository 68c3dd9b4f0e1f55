"""Backend adapters, one module per framework behind base.Backend; the registry maps names to them.

Families with several modules are subpackages: tvm/ (direct Relax ops, the importers, the compile
cache) and onnx/ (the ONNX model builder, ONNX Runtime, OpenVINO, and the converters run by ORT).
testing/ holds the test-only fault and mutant backends. Adapters import harness.model and
harness.numerics only; frameworks are imported inside the worker process.
"""
