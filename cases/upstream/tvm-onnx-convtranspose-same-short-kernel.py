"""[Relax][Frontend][ONNX] ConvTranspose auto_pad=SAME_UPPER with a kernel shorter than the stride: output is (L-1)*s+k, not L*s

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/pull/19450 (added the auto_pad handling, with the clamp); https://github.com/microsoft/onnxruntime/issues/11927 (ONNX Runtime's ConvTranspose auto_pad handling); https://github.com/onnx/onnx/issues/3153 (why SAME means input * stride for ConvTranspose)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, onnx 1.17.0, searched apache/tvm issues and PRs for "ConvTranspose SAME_UPPER kernel smaller than stride", "ConvTranspose auto_pad output shape", "negative total padding ConvTranspose"

What happens: for ConvTranspose with auto_pad SAME_UPPER or SAME_LOWER the ONNX spec fixes the output length at input * stride. With a (dilated) kernel shorter than the stride that needs a negative total_padding (the output reaches past the last kernel tap). The Relax importer computes total_pad = (k - 1) * d + 1 + output_padding - s and clamps it at 0, so the output is the unpadded (L - 1) * s + (k - 1) * d + 1: a 1-D ConvTranspose of length 3 with kernel 1, strides 2 gives length 5 instead of 6; a 2-D one, 1x2x4x4 input, kernel 2x2, strides 3, gives 1x3x11x11 instead of 1x3x12x12. The values it does return are the transposed convolution's.

Expected: output length L * stride (spec: "SAME_UPPER or SAME_LOWER mean pad the input so that output_shape[i] = input_shape[i] * strides[i]"). The extra element holds no tap, so it is 0 (plus bias); where it goes depends on how total_padding / 2 rounds for a negative total (TensorFlow's conv_transpose SAME and C's truncating division put it last; onnx.reference's floor division first), so the script judges the shape, and prints the float64 NumPy reference with the extra element last.

Mechanism: python/tvm/relax/frontend/onnx/onnx_frontend.py, ConvTranspose._impl_v1, the SAME_UPPER/SAME_LOWER branch: `total_pad = max(total_pad, 0)`. Relax's conv*_transpose padding cannot be negative; the missing length can be added as output_padding where it is below the stride (here it always is: -total_pad = s - (k - 1) * d - 1 < s), or by a pad after the op.

Host: any
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
