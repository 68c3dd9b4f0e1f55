"""LiteRT XNNPACK delegate accepts a VALID TRANSPOSE_CONV whose output_shape the input cannot produce and returns another shape (the excess taken modulo the stride)

Measures VALID and SAME TRANSPOSE_CONV models whose output_shape declares widths the input cannot produce (and one
valid width): what the built-in kernels and the XNNPACK delegate return, against full + (declared - kernel) % stride
and a float64 reference. Exits 1 where XNNPACK returns another shape instead of refusing.
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


print(f"tensorflow {tf.__version__} (TFLiteConverter), ai-edge-litert {litert_version}")
rng = np.random.RandomState(0)
K = 3


def model(win, stride, declared, padding):
    """conv2d_transpose over width only (kernel 1x3, 2 -> 2 channels) with the given output width."""
    w = tf.constant(rng.standard_normal((1, K, 2, 2)).astype(np.float32))  # (kh, kw, C_out, C_in)
    fn = tf.function(lambda t: tf.nn.conv2d_transpose(t, w, [1, 3, declared, 2], [1, 1, stride, 1], padding))
    return fn, w.numpy()


shown = False
for win, stride, declared, padding in [(5, 2, 13, "VALID"), (5, 3, 18, "VALID"), (5, 3, 19, "VALID"),
                                       (5, 3, 20, "VALID"), (5, 3, 21, "VALID"), (7, 1, 10, "VALID"),
                                       (5, 2, 12, "VALID"), (5, 2, 12, "SAME")]:
    full = (win - 1) * stride + K
    valid = full <= declared < full + stride if padding == "VALID" else declared == win * stride
    fn, w = model(win, stride, declared, padding)
    x = rng.standard_normal((1, 3, win, 2)).astype(np.float32)
    flat, err = convert(fn, tf.TensorSpec([1, 3, win, 2], tf.float32))
    what = (f"{padding}, input width {win}, kernel {K}, stride {stride}: full width {full}, declared {declared}"
            f" ({'valid' if valid else 'not producible'})")
    if err is not None:
        print(f"{what}: conversion refused: {err}")
        continue
    y_ref, _, err_ref = invoke(flat, x, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    y, declared_shape, err_x = invoke(flat, x, OpResolverType.AUTO)
    builtin = f"refused ({err_ref[:90]})" if err_ref else f"width {y_ref.shape[2]}"
    if err_x is not None:
        print(f"{what}\n    built-in kernels: {builtin}; XNNPACK: refused ({err_x[:90]})")
        continue
    got = y.shape[2]
    ref = np.zeros((1, 3, max(got, full), 2))
    for j in range(K):  # float64 transposed conv along the width, zero-extended
        ref[:, :, j:j + (win - 1) * stride + 1:stride, :] += np.einsum("nhwc,oc->nhwo", x.astype(np.float64), w[0, j].astype(np.float64))
    e = np.abs(y - ref[:, :, :got]).max()
    print(f"{what}\n    built-in kernels: {builtin}; XNNPACK: runs, width {got} (model's output tensor now "
          f"{declared_shape}), full + (declared - k) % stride = {full + (declared - K) % stride}; "
          f"max |y - float64 reference| {e:.2g}")
    shown |= got != declared
if shown:
    print("defect shown: XNNPACK returns a shape other than the declared output_shape instead of refusing it")
    sys.exit(1)
print("not shown: XNNPACK refuses (or honours) every declared output width")
sys.exit(0)
