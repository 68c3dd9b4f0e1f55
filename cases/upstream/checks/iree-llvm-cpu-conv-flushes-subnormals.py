"""IREE (llvm-cpu, local-task) flushes subnormal inputs and results of a convolution to zero

Measures: a one-node ONNX Conv imported by iree-import-onnx, compiled by iree-compile for llvm-cpu and the host
CPU, run on the local-task driver, on a subnormal input with normal products (x = 2^-128, w = 16) and on normal
inputs whose products and result are subnormal (x = w = 2^-65), float32, against the exact values. Exit 1 where
the result is zero.
"""
import importlib.metadata
import os
import subprocess
import sys
import tempfile

import iree.compiler as ic
import iree.runtime as rt
import numpy as np
import onnx
from onnx import TensorProto, helper

print("iree-base-compiler", importlib.metadata.version("iree-base-compiler"))
importer = os.path.join(os.path.dirname(sys.executable), "iree-import-onnx")
flushed = False
with tempfile.TemporaryDirectory() as tmp:
    for what, ex, ew in (("subnormal input, normal result", -128, 4), ("normal inputs, subnormal result", -65, -65)):
        w = helper.make_tensor("w", TensorProto.FLOAT, [1, 4, 3, 3], np.full(36, 2.0 ** ew, np.float32).tolist())
        graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3, 3])], [w])
        path = os.path.join(tmp, "m.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        subprocess.run([importer, path, "-o", path + ".mlir"], check=True)
        vmfb = ic.compile_file(path + ".mlir", target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"])
        module = rt.load_vm_flatbuffer(vmfb, driver="local-task")
        x = np.full((1, 4, 5, 5), 2.0 ** ex, np.float32)
        got = float(np.asarray(module.g(x))[0, 0, 0, 0])  # the function takes the graph's name
        want = 36 * 2.0 ** ex * 2.0 ** ew
        print(f"float32 {what}: {got!r}, exact {want!r}")
        flushed |= got == 0.0
sys.exit(1 if flushed else 0)
