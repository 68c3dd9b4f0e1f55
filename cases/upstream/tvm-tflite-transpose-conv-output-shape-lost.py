"""[Relax][Frontend][TFLite] TRANSPOSE_CONV with VALID padding ignores the output_shape tensor: the extra rows/columns are lost

Project: apache/tvm (https://github.com/apache/tvm/issues)
Upstream: none found
Related: https://github.com/apache/tvm/issues/19694 (NHWC conv2d_transpose not legalized, which stops the imported model from compiling); https://github.com/ARM-software/armnn/issues/751 (the same VALID output_shape bug in Arm NN's TFLite parser); https://github.com/apache/tvm/pull/19530 (CONV_3D_TRANSPOSE converter, which ignores output_shape too)
Checked: 2026-11-28, apache-tvm 0.27.0.post1, tensorflow-cpu 2.21.0, tflite 2.18.0, searched apache/tvm issues and PRs for "TFLite TRANSPOSE_CONV output_shape", "tflite transpose conv output shape wrong", "conv1d_transpose tflite reshape"

What happens: TFLite's TRANSPOSE_CONV takes the output shape as its first input tensor. With padding VALID that tensor may ask for more than the full transposed output (the extra rows/columns are what PyTorch calls output_padding; tf.nn.conv2d_transpose writes zeros there). The Relax TFLite importer reads output_shape only for SAME and, for VALID, emits conv2d_transpose with padding 0 and output_padding 0. A conv2d_transpose of a 1x5x5x3 input, 3x3 kernel, stride 2, output_shape [1, 12, 12, 4] (the TFLite model's output tensor is declared 1x12x12x4) imports as a function returning R.Tensor((1, 11, 11, 4)); compiled (after ConvertLayout to NCHW, see the related NHWC issue) it returns 1x11x11x4. The importer warns of nothing. tf.nn.conv1d_transpose, which TensorFlow lowers to a 2-D TRANSPOSE_CONV between two reshapes, is refused at import: "Reshape expects the new shape to be convertible from the old shape ... R.shape([1, 1, 11, 4]) ... R.shape([1, 12, 4])". A residual add of a tensor of the declared shape after the conv fails the same way.

Expected: the output has the shape the output_shape tensor states (TensorFlow's conv2d_transpose and the TFLite reference kernel both return 1x12x12x4): the full transposed convolution, 11x11, followed by one row and one column that no input reaches (0). The script checks against a float64 NumPy transposed convolution padded to that shape.

Mechanism: python/tvm/relax/frontend/tflite/tflite_frontend.py, OperatorConverter.convert_transpose_conv: `if padding == Padding.SAME: ... else: padding = (0, 0, 0, 0)`; output_shape_value is used only for the SAME padding and the channel assert, never compared with the VALID output size, and no output_padding is passed to relax.op.nn.conv2d_transpose. convert_conv3d_transpose (CONV_3D_TRANSPOSE) also never reads the output_shape tensor (output_padding fixed to [0, 0, 0] for VALID). A fix: output_padding = output_shape - ((in - 1) * stride + kernel) per spatial axis for VALID (a relax output_padding must also stay below the stride; a larger excess needs a pad after the conv).

Host: any
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's C++ info/warning logs only; no effect on the conversion

import numpy as np
import tensorflow as tf
import tflite
import tvm
from tvm import relax
from tvm.relax.frontend.tflite import from_tflite

print("tvm", tvm.__version__, "| tensorflow", tf.__version__)

N, H, W, C_IN, C_OUT, K, S = 1, 5, 5, 3, 4, 3, 2
FULL = (H - 1) * S + K                      # 11: the VALID transposed output
OUT_SHAPE = [N, FULL + 1, FULL + 1, C_OUT]  # 12: one row and column more (output_padding 1)
rng = np.random.default_rng(0)
x = rng.standard_normal((N, H, W, C_IN)).astype(np.float32)
w = rng.standard_normal((K, K, C_OUT, C_IN)).astype(np.float32)  # TF conv2d_transpose filter: (kh, kw, out, in)


def reference() -> np.ndarray:
    """float64 transposed convolution, NHWC: every input pixel scatters x * w into a KxK window at stride S."""
    y = np.zeros((N, FULL, FULL, C_OUT))
    for i in range(H):
        for j in range(W):
            y[:, i * S:i * S + K, j * S:j * S + K, :] += np.einsum("nc,abuc->nabu", x[:, i, j].astype(np.float64), w)
    return np.pad(y, [(0, 0), (0, 1), (0, 1), (0, 0)])  # rows/columns no input reaches: 0


def to_tflite(fn, spec) -> bytes:
    f = tf.function(fn, input_signature=[spec], autograph=False)
    return tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f).convert()


buf2d = to_tflite(lambda t: tf.nn.conv2d_transpose(t, tf.constant(w), OUT_SHAPE, S, "VALID"),
                  tf.TensorSpec(x.shape, tf.float32))
buf1d = to_tflite(lambda t: tf.nn.conv1d_transpose(t, tf.constant(w[0]), [N, FULL + 1, C_OUT], S, "VALID"),
                  tf.TensorSpec((N, W, C_IN), tf.float32))

model = tflite.Model.GetRootAsModel(buf2d, 0)
graph = model.Subgraphs(0)
declared = [int(v) for v in graph.Tensors(graph.Outputs(0)).ShapeAsNumpy()]
print(f"conv2d_transpose input {list(x.shape)}, kernel {K}x{K}, stride {S}, padding VALID, output_shape {OUT_SHAPE}")
print(f"TFLite model's output tensor: {declared}")

defect = False
mod = from_tflite(model)
imported = [int(v) for v in mod["main"].ret_ty.shape]
print(f"from_tflite: main returns {imported}")
expected = reference()
if imported != OUT_SHAPE:
    defect = True
try:  # NHWC conv2d_transpose is not legalized (apache/tvm#19694): run it in NCHW
    mod = relax.transform.ConvertLayout({"relax.nn.conv2d_transpose": ["NCHW", "IOHW"]})(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    y = vm["main"](tvm.runtime.tensor(x)).numpy()
except Exception as exc:  # noqa: BLE001 - a failure here is not the defect reported
    print(f"could not run the imported model: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
else:
    print(f"compiled output shape {list(y.shape)}, expected {list(expected.shape)}")
    common = tuple(slice(0, min(a, b)) for a, b in zip(y.shape, expected.shape))
    err = np.abs(y[common] - expected[common])
    print(f"on the common {[s.stop for s in common]} block: max |y - ref| = {err.max():.3g} (float32 rounding)")
    defect = defect or y.shape != expected.shape

try:
    mod1 = from_tflite(tflite.Model.GetRootAsModel(buf1d, 0))
    print(f"conv1d_transpose, output_shape {[N, FULL + 1, C_OUT]}: main returns {[int(v) for v in mod1['main'].ret_ty.shape]}")
except Exception as exc:  # noqa: BLE001 - the refusal is the defect
    defect = True
    print(f"conv1d_transpose, output_shape {[N, FULL + 1, C_OUT]}: from_tflite raised {type(exc).__name__}: "
          f"{str(exc).splitlines()[0][:220]}")

print("DEFECT: the VALID output_shape is ignored" if defect else "output_shape honoured")
sys.exit(1 if defect else 0)
