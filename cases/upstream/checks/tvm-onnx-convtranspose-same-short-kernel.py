"""ConvTranspose auto_pad SAME_UPPER with a kernel shorter than the stride through TVM's Relax ONNX importer

Measures the output shape against L * stride (1-D: length 3, kernel 1, strides 2; 2-D: 4x4, kernel 2, strides 3) and
the values on the block TVM returns, against a float64 transposed convolution with the extra element last.
"""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper, numpy_helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx

print("tvm", tvm.__version__, "| onnx", onnx.__version__)
rng = np.random.default_rng(0)
C_IN, C_OUT = 2, 3


def reference(x: np.ndarray, w: np.ndarray, s: int) -> np.ndarray:
    """float64 transposed convolution, every tap scattered at stride s, then zeros to length L * s at the end."""
    rank = x.ndim - 2
    n, k = x.shape[2:], w.shape[2:]
    y = np.zeros((1, w.shape[1], *(m * s for m in n)))
    for pos in np.ndindex(*n):
        for tap in np.ndindex(*k):
            idx = tuple(p * s + t for p, t in zip(pos, tap))
            if all(i < m * s for i, m in zip(idx, n)):
                y[(slice(None), slice(None), *idx)] += x[(slice(None), slice(None), *pos)].astype(np.float64) @ w[(slice(None), slice(None), *tap)]
    assert y.ndim == rank + 2
    return y


defect = False
for shape, k, s in (((1, C_IN, 3), 1, 2), ((1, C_IN, 4, 4), 2, 3)):
    rank = len(shape) - 2
    x = rng.integers(-3, 4, size=shape).astype(np.float32)
    w = rng.integers(-3, 4, size=(C_IN, C_OUT) + (k,) * rank).astype(np.float32)
    expected = reference(x, w, s)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[s] * rank, auto_pad="SAME_UPPER")
    graph = helper.make_graph([node], "convtranspose_same",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(expected.shape))],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    mod = from_onnx(model, shape_dict={"x": list(shape)})
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    y = vm["main"](tvm.runtime.tensor(x)).numpy()
    print(f"ConvTranspose input {list(shape)}, kernel {k}, strides {s}, auto_pad SAME_UPPER: "
          f"expected {list(expected.shape)} (L * stride), TVM {list(y.shape)}")
    if rank == 1:
        print(f"  expected channel 0: {expected[0, 0].tolist()}\n  TVM      channel 0: {y[0, 0].tolist()}")
    if y.shape != expected.shape:
        defect = True
        common = tuple(slice(0, m) for m in y.shape)
        print(f"  on TVM's {list(y.shape[2:])} block the values agree to {np.abs(y - expected[common]).max():.2g}")
    elif np.abs(y - expected).max() > 1e-4:
        print(f"  shape right; values differ by {np.abs(y - expected).max():.3g} (placement of the zero element)")
print("DEFECT: the SAME output is shorter than input * stride" if defect else "SAME output length right")
sys.exit(1 if defect else 0)
