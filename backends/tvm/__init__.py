"""TVM adapters: direct Relax ops (direct), the torch/ONNX/TFLite importers, their pure plans
(plan), gradients, and the on-disk compile cache (cache).
"""
