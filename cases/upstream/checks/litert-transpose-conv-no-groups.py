"""TFLiteConverter converts a grouped tf.nn.conv2d_transpose into a TRANSPOSE_CONV that no LiteRT kernel can run

Measures a grouped tf.nn.conv2d_transpose (4 -> 6 channels, 2 groups) in TensorFlow against a float64 reference, its
conversion by TFLiteConverter (the TRANSPOSE_CONV's weight shape) and whether LiteRT runs it with XNNPACK and with the
reference kernels. Exits 1 where the converted model cannot run or runs wrong.
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
G, CIN, COUT = 2, 4, 6
W = rng.standard_normal((3, 3, COUT // G, CIN)).astype(np.float32)  # (kh, kw, C_out/groups, C_in)
X = rng.standard_normal((1, 5, 5, CIN)).astype(np.float32)
fn = tf.function(lambda t: tf.nn.conv2d_transpose(t, W, [1, 7, 7, COUT], 1, "VALID"))
ref = np.zeros((1, 7, 7, COUT))
for g in range(G):
    for i, j in np.ndindex(3, 3):
        ref[:, i:i + 5, j:j + 5, g * (COUT // G):(g + 1) * (COUT // G)] += np.einsum(
            "nhwc,oc->nhwo", X[..., g * (CIN // G):(g + 1) * (CIN // G)].astype(np.float64),
            W[i, j, :, g * (CIN // G):(g + 1) * (CIN // G)].astype(np.float64))
try:
    print(f"TensorFlow runs the grouped conv2d_transpose: max |y - float64 reference| {np.abs(fn(X).numpy() - ref).max():.2g}")
except Exception as exc:  # TF's Eigen CPU kernel refuses groups; the converter's behaviour does not depend on it
    print(f"TensorFlow refuses it on this host: {str(exc).strip().splitlines()[0][:140]}")
model, err = convert(fn, tf.TensorSpec([1, 5, 5, CIN], tf.float32))
if err is not None:
    print(f"TFLiteConverter: refused: {err}")
    print("not shown: the converter refuses the grouped transposed convolution")
    sys.exit(0)
probe = Interpreter(model_content=model)
try:  # the TRANSPOSE_CONV node's inputs: output_shape, weights, input (a private but long-standing API)
    node = next(op for op in probe._get_ops_details() if op["op_name"] == "TRANSPOSE_CONV")
    shapes = {d["index"]: [int(v) for v in d["shape"]] for d in probe.get_tensor_details()}
    weights = shapes[int(node["inputs"][1])]
except Exception:  # noqa: BLE001 - the shape is a detail of the printout only
    weights = "?"
print(f"TFLiteConverter: converted to TRANSPOSE_CONV, weights {weights} (O, kh, kw, I), declared output depth {COUT}")
shown = False
for name, resolver in (("XNNPACK (default)", OpResolverType.AUTO), ("reference kernels", OpResolverType.BUILTIN_REF)):
    y, shape, err = invoke(model, X, resolver)
    if err is not None:
        print(f"LiteRT, {name}: refused: {err}")
        shown = True
    else:
        e = np.abs(y - ref).max() if y.shape == ref.shape else np.inf
        print(f"LiteRT, {name}: runs, shape {list(y.shape)}, max |y - float64 reference| {e:.2g}")
        shown |= bool(e > 1e-4)
if shown:
    print("defect shown: the converted model cannot run (or runs wrong)")
    sys.exit(1)
print("not shown: the converted grouped model runs and is right")
sys.exit(0)
