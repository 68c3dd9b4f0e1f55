"""TFLite TRANSPOSE_CONV with VALID padding and an output_shape beyond the full output, through TVM's Relax TFLite importer

Measures the TFLite model's declared output shape against the imported function's, the values on the common block
against a float64 reference (run after ConvertLayout to NCHW), and the conv1d_transpose import.
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
