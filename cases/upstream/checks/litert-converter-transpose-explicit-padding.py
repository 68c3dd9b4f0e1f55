"""Full check: TFLiteConverter on conv2d_transpose with explicit padding, and the VALID + crop form, run in LiteRT

Measures: TensorFlow's own result for the explicit-padding form against a float64 reference; then each form
converted with builtin ops only and, where it converts, run with the LiteRT interpreter against that reference.
Exit 1 when the explicit-padding form is refused, 0 otherwise.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # the converter's MLIR dump and absl warnings
import numpy as np
import tensorflow as tf
from ai_edge_litert import __version__ as litert_version
from ai_edge_litert.interpreter import Interpreter, OpResolverType


def convert(fn, spec, ops=(tf.lite.OpsSet.TFLITE_BUILTINS,), **options):
    """TFLiteConverter on a tf.function, builtin ops only (no TF Select): (flatbuffer, None) or (None, error).
    The converter's MLIR diagnostics (printed to the process's stderr) are silenced; its exception says it all."""
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function(spec)], fn)
    conv.target_spec.supported_ops = list(ops)
    for k, v in options.items():
        setattr(conv, k, v)
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        return conv.convert(), None
    except Exception as exc:  # a refused conversion is reported, not raised
        lines = [ln.strip() for ln in str(exc).splitlines() if "error:" in ln] or [str(exc).strip().splitlines()[0]]
        return None, lines[0].split("error: ", 1)[-1][:200]
    finally:
        os.dup2(saved, 2)
        os.close(null)
        os.close(saved)


def invoke(model, x, resolver=OpResolverType.AUTO):
    """Run a flatbuffer with the LiteRT interpreter: (output, declared output shape, None) or (None, None, error)."""
    try:
        it = Interpreter(model_content=model, experimental_op_resolver_type=resolver)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        out = it.get_output_details()[0]
        return it.get_tensor(out["index"]), [int(v) for v in out["shape"]], None
    except Exception as exc:  # a refused model is reported, not raised
        return None, None, str(exc).strip().splitlines()[0][:200]


def conv_transpose_nhwc(x, w, stride):
    """float64 full (VALID) transposed conv, NHWC, w (kh, kw, C_out, C_in) as tf.nn.conv2d_transpose takes it."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, h, wd, _ = x.shape
    kh, kw, cout, _ = w.shape
    y = np.zeros((n, (h - 1) * stride + kh, (wd - 1) * stride + kw, cout))
    for i, j in np.ndindex(kh, kw):
        y[:, i:i + (h - 1) * stride + 1:stride, j:j + (wd - 1) * stride + 1:stride, :] += np.einsum("nhwc,oc->nhwo", x, w[i, j])
    return y


print(f"tensorflow {tf.__version__} (TFLiteConverter), ai-edge-litert {litert_version}")
rng = np.random.RandomState(0)
W = rng.standard_normal((3, 3, 4, 4)).astype(np.float32)  # (kh, kw, C_out, C_in)
X = rng.standard_normal((1, 5, 5, 4)).astype(np.float32)
REF = conv_transpose_nhwc(X, W, 1)[:, 1:-1, 1:-1, :]  # full 7x7, explicit pads 1 on each side
spec = tf.TensorSpec([1, 5, 5, 4], tf.float32)
explicit = tf.function(lambda t: tf.nn.conv2d_transpose(t, W, [1, 5, 5, 4], 1, [[0, 0], [1, 1], [1, 1], [0, 0]]))
cropped = tf.function(lambda t: tf.nn.conv2d_transpose(t, W, [1, 7, 7, 4], 1, "VALID")[:, 1:-1, 1:-1, :])
try:
    print(f"TensorFlow runs the explicit-padding form: max |y - float64 reference| {np.abs(explicit(X).numpy() - REF).max():.2g}")
except Exception as exc:  # not expected: said in one line rather than a traceback
    print(f"TensorFlow refuses the explicit-padding form: {str(exc).strip().splitlines()[0][:160]}")
shown = False
for name, fn in (("padding=[[0, 0], [1, 1], [1, 1], [0, 0]] (EXPLICIT)", explicit), ("padding='VALID', then a crop", cropped)):
    model, err = convert(fn, spec)
    if err is not None:
        print(f"convert {name}: refused: {err}")
        shown |= fn is explicit
        continue
    y, shape, err = invoke(model, X)
    result = f"refused at run: {err}" if err else f"runs, max |y - float64 reference| {np.abs(y - REF).max():.2g}"
    print(f"convert {name}: converted; LiteRT {result}")
if shown:
    print("defect shown: the explicit-padding transposed convolution does not convert")
    sys.exit(1)
print("not shown: the explicit-padding form converts")
sys.exit(0)
