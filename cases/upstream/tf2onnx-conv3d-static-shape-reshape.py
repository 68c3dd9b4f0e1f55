"""tf2onnx bakes TensorFlow's static Conv3D shape into a Reshape, and that shape is wrong when H and W dilations differ.

TF's traced Conv3D shape swaps the H and W dilations (tf-conv3d-static-shape-dilations-swapped). With one
output channel, tf2onnx turns the NDHWC -> NCDHW Transpose around the Conv into a Reshape to that traced
shape, so ONNX Runtime fails at run time ("cannot be reshaped to the requested shape"); with two output
channels the Transpose stays and the model runs and is right."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import onnxruntime as ort
import tensorflow as tf
import tf2onnx


def reference(x, w, dil):
    """VALID NDHWC cross-correlation in float64 (TF's eager CPU kernel refuses dilated Conv3D without oneDNN)."""
    k, n = w.shape[:3], x.shape[1:4]
    out = [n_ - d * (k_ - 1) for n_, k_, d in zip(n, k, dil)]
    y = np.zeros((x.shape[0], *out, w.shape[4]))
    for a in range(k[0]):
        for b in range(k[1]):
            for c in range(k[2]):
                patch = x[:, a * dil[0]:a * dil[0] + out[0], b * dil[1]:b * dil[1] + out[1], c * dil[2]:c * dil[2] + out[2]]
                y += np.einsum("ndhwi,io->ndhwo", patch, w[a, b, c])
    return y


def conv_with(w_np):
    """The conv with its filter made inside the trace (a graph constant), H dilation 1, W dilation 2."""
    return lambda t: tf.nn.conv3d(t, tf.constant(w_np), [1] * 5, "VALID", dilations=[1, 1, 1, 2, 1])


rng = np.random.default_rng(0)
x = rng.standard_normal((1, 5, 6, 7, 1)).astype(np.float32)  # N, D, H, W, C
for out_channels in (1, 2):
    w_np = rng.standard_normal((3, 3, 3, 1, out_channels)).astype(np.float32)  # D, H, W, in, out
    w = tf.constant(w_np)

    fn = tf.function(conv_with(w), autograph=False, input_signature=[tf.TensorSpec(x.shape, tf.float32, name="x")])

    model, _ = tf2onnx.convert.from_function(fn, input_signature=[tf.TensorSpec(x.shape, tf.float32, name="x")])
    reshapes = [n.name for n in model.graph.node if n.op_type == "Reshape"]
    want = reference(x.astype(np.float64), w_np.astype(np.float64), (1, 1, 2))
    try:
        got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        print(f"out_channels {out_channels}: Reshape nodes {reshapes}; ran, shape {got.shape} (reference {want.shape}), "
              f"max |diff| {np.abs(got - want).max():.2e}")
    except Exception as exc:  # noqa: BLE001 - the bug
        print(f"out_channels {out_channels}: Reshape nodes {reshapes}; ONNX Runtime failed: {str(exc)[:230]}")
print(f"tf {tf.__version__}, tf2onnx {tf2onnx.__version__}, onnxruntime {ort.__version__}; traced shape of the conv:",
      fn.get_concrete_function().structured_outputs.shape, "(true (1, 3, 4, 3, 2))")
