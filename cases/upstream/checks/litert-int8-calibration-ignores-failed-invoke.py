"""TFLiteConverter int8 calibration ignores a failed invoke of the float model and quantizes with garbage ranges (grouped conv2d_transpose)

Measures full-integer quantization of a grouped conv2d_transpose with a bias: whether TensorFlow and the float TFLite
model run it, the int8 model's output scale against the one the calibration data give, and what invoking the int8
model does with XNNPACK and the reference kernels (each in a child process, since it may abort). Exits 1 where the
scale does not fit the data or the model aborts.
"""
import os
import signal
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # the converter's MLIR dump and absl warnings
import numpy as np
from ai_edge_litert import __version__ as litert_version
from ai_edge_litert.interpreter import Interpreter, OpResolverType

if len(sys.argv) == 3 and sys.argv[1] == "child":  # run the int8 model in a fresh process: it may abort
    model_path, resolver = sys.argv[2], OpResolverType.BUILTIN_REF if os.environ.get("REF") else OpResolverType.AUTO
    it = Interpreter(model_path=model_path, experimental_op_resolver_type=resolver)
    try:
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], np.zeros((1, 7, 7, 8), np.int8))
        it.invoke()
        print("ran", flush=True)
    except Exception as exc:  # a refusal is one of the outcomes
        print("refused:", str(exc).strip().splitlines()[0][:160], flush=True)
    sys.exit(0)

import tensorflow as tf  # noqa: E402  (after the child branch: the child needs LiteRT only)


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
G, CIN, COUT = 2, 8, 8
W = (rng.standard_normal((3, 3, COUT // G, CIN)) * 0.1).astype(np.float32)  # (kh, kw, C_out/groups, C_in)
B = rng.standard_normal(COUT).astype(np.float32)
X = rng.uniform(-1, 1, (1, 7, 7, CIN)).astype(np.float32)
fn = tf.function(lambda t: tf.nn.bias_add(tf.nn.conv2d_transpose(t, W, [1, 9, 9, COUT], 1, "VALID"), B))
spec = tf.TensorSpec([1, 7, 7, CIN], tf.float32)

# float64 reference of the grouped transposed conv + bias on the calibration input: the range calibration should see
ref = np.zeros((1, 9, 9, COUT))
for g in range(G):
    for i, j in np.ndindex(3, 3):
        ref[:, i:i + 7, j:j + 7, g * (COUT // G):(g + 1) * (COUT // G)] += np.einsum(
            "nhwc,oc->nhwo", X[..., g * (CIN // G):(g + 1) * (CIN // G)].astype(np.float64),
            W[i, j, :, g * (CIN // G):(g + 1) * (CIN // G)].astype(np.float64))
ref += B
expected_scale = (ref.max() - min(ref.min(), 0.0)) / 255
try:
    tf_out = fn(X).numpy()
    print(f"TensorFlow runs the float model: max |y - float64 reference| {np.abs(tf_out - ref).max():.2g}")
except Exception as exc:  # TF's CPU kernel may refuse a grouped transposed conv on some builds
    print(f"TensorFlow refuses the float model: {str(exc).strip().splitlines()[0][:140]}")
float_model, err = convert(fn, spec)
if err is None:
    y, _, err = invoke(float_model, X)
print(f"float TFLite model (what the calibrator runs): {'refused at invoke: ' + err if err else 'runs'}")

model, err = convert(fn, spec, ops=(tf.lite.OpsSet.TFLITE_BUILTINS_INT8,), optimizations=[tf.lite.Optimize.DEFAULT],
                     representative_dataset=lambda: iter([[X]]), inference_input_type=tf.int8,
                     inference_output_type=tf.int8)
if err is not None:
    print(f"int8 conversion: failed: {err} (the calibrated ranges are garbage)")
    print("defect shown: calibration went on after the float model failed")
    sys.exit(1)
scale = float(Interpreter(model_content=model).get_output_details()[0]["quantization_parameters"]["scales"][0])
print(f"int8 model: output scale {scale:.3g}; expected from the calibration data about {expected_scale:.3g}")
shown = not (expected_scale / 4 < scale < expected_scale * 4)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "int8.tflite")
    with open(path, "wb") as fh:
        fh.write(model)
    for name, env in (("XNNPACK (default)", {}), ("reference kernels", {"REF": "1"})):
        child = subprocess.run([sys.executable, __file__, "child", path], capture_output=True, text=True, timeout=300,
                               env={**os.environ, **env})
        out = (child.stdout.strip().splitlines() or ["no output"])[-1]
        if child.returncode < 0:
            print(f"int8 model, {name} (child process): killed by {signal.Signals(-child.returncode).name}")
        else:
            print(f"int8 model, {name} (child process): {out}")
if shown:
    print("defect shown: the int8 model carries ranges calibration never measured")
    sys.exit(1)
print("not shown: the output scale matches the calibration data")
sys.exit(0)
