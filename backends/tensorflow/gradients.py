"""TensorFlow gradients (`tensorflow` and `tensorflow-keras`): tf.GradientTape around the forward call.

The forward is the adapter's own call (tf.nn ops, or the Keras layer), in the same
layout handling, so the backward kernels are the ones TF registers for exactly the
forward a user runs (Conv*BackpropInput / BackpropFilter, the bias_add gradient, and
the gradients of any exact identity: pad, crop, layout transpose). The tf.nn path
watches the canonical weight and transposes it inside the tape, so its gradient
comes back in the canonical layout; a Keras layer holds its kernel as a variable in
TF's filter layout, and that gradient is transposed back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Output, Rejected, Unsupported, first_line
from backends.tensorflow.util import NHWC_ONLY, NODE_PREFIX, weight_transpose
from harness.model.case import Case
from harness.numerics.inputs import Inputs


def _tape(backend: Any, case: Case, x: Any, wc: Any, b: Any, dy: np.ndarray, perm: list[int], count: int,
          device: str, refused: str) -> tuple[Any, list[str], list[str], list[Any]]:
    """Forward under a tape, then the gradients: (Keras layer or None, code lines, notes, grads)."""
    tf = backend.tf
    backend.layer = None  # KerasBackend.call sets it to the layer it built
    with tf.GradientTape() as tape:
        tape.watch([t for t in (x, wc, b) if t is not None])
        w = tf.transpose(wc, perm)
        y, lines, notes = backend.layout_call(case, x, w, b, device, refused)
    layer = backend.layer
    sources = [x, wc, b] if layer is None else [x, layer.kernel, layer.bias]
    return layer, lines, notes, tape.gradient(y, sources[:count], output_gradients=tf.constant(dy))


def tape_gradients(backend: Any, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Any]:
    """grad_input, grad_weight (and grad_bias) of the backend's forward call for upstream `dy`."""
    tf = backend.tf
    perm, pre_line = weight_transpose(case)
    names = ["grad_input", "grad_weight", *(["grad_bias"] if inputs.b is not None else [])]
    with tf.device("/GPU:0" if device == "cuda" else "/CPU:0"):
        x, wc = tf.constant(inputs.x), tf.constant(inputs.w)
        b = None if inputs.b is None else tf.constant(inputs.b)
        try:
            try:
                layer, lines, notes, grads = _tape(backend, case, x, wc, b, dy, perm, len(names), device, "")
            except Exception as exc:  # the backward kernel may take N*C only where the forward took NC*
                if case.channels_last or not NHWC_ONLY.search(str(exc)):
                    raise
                refusal = NODE_PREFIX.sub("", first_line(exc))
                layer, lines, notes, grads = _tape(backend, case, x, wc, b, dy, perm, len(names), device, refusal)
        except (Unsupported, Rejected):
            raise
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(NODE_PREFIX.sub("", first_line(exc))) from None
        what = "x, w, b"[:3 * len(names) - 2]
        # a layout fallback rebinds x inside the tape; the gradient is still taken for x as given
        rebinds = any(ln.startswith("x = ") for ln in lines)
        keep = ["    x_given = x  # the layout lines below rebind x"] if rebinds else []
        source = "x_given" if rebinds else "x"
        if layer is None:
            head = ["with tf.GradientTape() as tape:", f"    tape.watch([{what.replace('w', 'w_canonical')}])",
                    *keep, f"    {pre_line}"]
            tail = f"grads = tape.gradient(y, [{what.replace('w', 'w_canonical').replace('x', source)}], " \
                   "output_gradients=dy)"
        else:
            head = [pre_line, "with tf.GradientTape() as tape:", "    tape.watch(x)", *keep]
            tail = f"grads = tape.gradient(y, [{source}, layer.kernel{', layer.bias' if b is not None else ''}], " \
                   "output_gradients=dy)  # kernel gradient in (*k, ...) filter layout"
        translation = "\n".join([*head, *(f"    {ln}" for ln in lines), tail])
        out: dict[str, Any] = {}
        for name, g in zip(names, grads):
            if g is None:
                out[name] = RuntimeError(f"tape.gradient returned None for {name} (source not connected)")
                continue
            arr, dtype = backend.to_numpy(tf.convert_to_tensor(g))
            if name == "grad_weight" and layer is not None:
                arr = np.ascontiguousarray(np.transpose(arr, np.argsort(perm)))
            out[name] = Output(arr, dtype, translation, notes=list(notes))
    return out
