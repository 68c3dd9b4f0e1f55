"""ONNX-side adapters: the ONNX model builder (model), ONNX Runtime and OpenVINO on it, and the
converter paths torch.onnx, tf2onnx and paddle2onnx, each run by ONNX Runtime.
"""
