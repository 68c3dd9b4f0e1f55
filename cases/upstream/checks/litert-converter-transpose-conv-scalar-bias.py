"""TFLiteConverter folds a scalar add after a bias-less conv2d_transpose into a 1-element TRANSPOSE_CONV bias: NaN with XNNPACK, refused by the reference kernels

Measures bias-less conv2d_transpose followed by + 0.5 (1 -> 2 and 1 -> 1 channels, and 1 -> 2 with a conv bias)
through TFLiteConverter: the TRANSPOSE_CONV's bias operand shape, and the outputs with XNNPACK and with the reference
kernels (NaN per channel, error to a float64 reference). Exits 1 where the folded bias is wrong.
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
def model_fn(w, b):
    """conv2d_transpose(x, w) (+ b) + 0.5 as a tf.function with w and b as constants."""
    w_c = tf.constant(w)
    b_c = None if b is None else tf.constant(b)

    def f(t):
        y = tf.nn.conv2d_transpose(t, w_c, [1, 6, 6, w.shape[2]], 1, "VALID")
        if b_c is not None:
            y = tf.nn.bias_add(y, b_c)
        return y + 0.5

    return tf.function(f)


rng = np.random.RandomState(0)
X = rng.standard_normal((1, 4, 4, 1)).astype(np.float32)
spec = tf.TensorSpec([1, 4, 4, 1], tf.float32)
shown = False
for cout, bias in ((2, False), (1, False), (2, True)):
    W = rng.standard_normal((3, 3, cout, 1)).astype(np.float32)
    B = rng.standard_normal(cout).astype(np.float32)
    fn = model_fn(W, B if bias else None)
    ref = conv_transpose_nhwc(X, W, 1) + (B if bias else 0) + 0.5
    what = f"conv2d_transpose 1->{cout}{' + bias' if bias else ''}, then + 0.5"
    model, err = convert(fn, spec)
    if err is not None:
        print(f"{what}: conversion refused: {err}")
        continue
    probe = Interpreter(model_content=model)
    try:  # the TRANSPOSE_CONV node's bias operand (input 3; a private but long-standing API)
        node = next(op for op in probe._get_ops_details() if op["op_name"] == "TRANSPOSE_CONV")
        shapes = {d["index"]: [int(v) for v in d["shape"]] for d in probe.get_tensor_details()}
        bias_shape = shapes.get(int(node["inputs"][3]), "none") if len(node["inputs"]) > 3 and node["inputs"][3] >= 0 else "none"
    except Exception:  # noqa: BLE001 - a detail of the printout only
        bias_shape = "?"
    print(f"{what}: converted; TRANSPOSE_CONV bias operand shape {bias_shape}")
    for name, resolver in (("XNNPACK (default)", OpResolverType.AUTO), ("reference kernels", OpResolverType.BUILTIN_REF)):
        y, _, err = invoke(model, X, resolver)
        if err is not None:
            print(f"    LiteRT, {name}: refused: {err}")
            shown |= cout > 1 and not bias
            continue
        nan = int(np.isnan(y).sum())
        e = float(np.abs(y - ref)[~np.isnan(y)].max()) if nan < y.size else float("nan")
        per_channel = [int(np.isnan(y[..., c]).sum()) for c in range(cout)]
        print(f"    LiteRT, {name}: {nan} of {y.size} elements NaN (per channel {per_channel}); max |y - float64 "
              f"reference| over the finite ones {e:.2g}")
        shown |= bool(nan > 0 or e > 1e-4)
if shown:
    print("defect shown: the folded scalar bias is wrong")
    sys.exit(1)
print("not shown: every converted model is right")
sys.exit(0)
