"""The epilogue in TensorFlow and Keras, as their users write it after a conv: written once for
`tensorflow`, `tensorflow-keras`, `tensorflow-graph` and `tf-xla`.

`Epilogue.apply_tf` (tf ops) and `Epilogue.apply_keras` (Keras layers where they exist, keras.ops
otherwise) act on y in the layout the adapter's call produced it: NC* (`nc`) or N*C, the latter
also when a channels_first case fell back to N*C. Per-channel vectors are reshaped to broadcast
along that layout's channel axis; scalars are Python floats (exact: drawn in the case dtype).
Residuals are tensors in the case layout (`residuals`), transposed when the call's layout differs.
In a tf.function the constants are made inside the trace (graph Const nodes a compiler may fold)
and each residual is a function argument.

Spellings that need saying: hardswish in tf is `y * tf.nn.relu6(y + 3) / 6` (tf.nn has none);
Keras' `hard_silu` (alias hard_swish) is x * (relu6(x + 3) / 6), the same exact definition with
the division rounded first. Keras' Activation('gelu') is keras.activations.gelu, approximate=False
(erf, as the oracle; keras.ops.gelu defaults to the tanh approximation and is not used).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from backends.tensorflow.util import layout_perms
from harness.model.case import BATCH_NORM_EPS, CLAMP_RANGE, EPILOGUE_OPS, LEAKY_SLOPE, Case

TF_EPILOGUE_OPS = EPILOGUE_OPS  # every op has a TF spelling (hardswish as its definition)
KERAS_EPILOGUE_OPS = EPILOGUE_OPS
BN_KEYS = ("mean", "var", "gamma", "beta")

TF_ACTIVATIONS = {  # name -> the call as code (y is the argument)
    "relu": "tf.nn.relu(y)", "relu6": "tf.nn.relu6(y)", "leaky_relu": f"tf.nn.leaky_relu(y, alpha={LEAKY_SLOPE})",
    "sigmoid": "tf.sigmoid(y)", "tanh": "tf.tanh(y)", "gelu": "tf.nn.gelu(y, approximate=False)",
    "hardswish": "y * tf.nn.relu6(y + 3) / 6  # tf has no hardswish op: its definition",
    "silu": "tf.nn.silu(y)", "clamp": f"tf.clip_by_value(y, {CLAMP_RANGE[0]}, {CLAMP_RANGE[1]})",
}
KERAS_LAYERS = {  # name -> (the layer's class and arguments as code, a comment); a clamp has no layer
    "relu": ("ReLU(", ""), "relu6": ("ReLU(max_value=6.0, ", ""),
    "leaky_relu": (f"LeakyReLU(negative_slope={LEAKY_SLOPE}, ", ""),
    "sigmoid": ("Activation('sigmoid', ", ""), "tanh": ("Activation('tanh', ", ""),
    "gelu": ("Activation('gelu', ", "  # keras.activations.gelu: approximate=False (erf)"),
    "hardswish": ("Activation('hard_silu', ", "  # x * (relu6(x + 3) / 6)"),
    "silu": ("Activation('silu', ", ""),
}


def _tf_activation(tf: Any, name: str, y: Any) -> Any:
    if name == "hardswish":
        return y * tf.nn.relu6(y + 3) / 6
    return {"relu": tf.nn.relu, "relu6": tf.nn.relu6, "leaky_relu": lambda t: tf.nn.leaky_relu(t, alpha=LEAKY_SLOPE),
            "sigmoid": tf.sigmoid, "tanh": tf.tanh, "gelu": lambda t: tf.nn.gelu(t, approximate=False),
            "silu": tf.nn.silu, "clamp": lambda t: tf.clip_by_value(t, *CLAMP_RANGE)}[name](y)


def _keras_layer(keras: Any, name: str, dtype: str) -> Any:
    if name == "relu":
        return keras.layers.ReLU(dtype=dtype)
    if name == "relu6":
        return keras.layers.ReLU(max_value=6.0, dtype=dtype)
    if name == "leaky_relu":
        return keras.layers.LeakyReLU(negative_slope=LEAKY_SLOPE, dtype=dtype)
    return keras.layers.Activation({"hardswish": "hard_silu"}.get(name, name), dtype=dtype)


def residual_names(case: Case) -> list[str]:
    """The residual inputs' names, in epilogue order."""
    return [f"residual{i}" for i, name in enumerate(case.epilogue) if name == "residual"]


@dataclass
class Epilogue:
    """A case's epilogue with its constants (numpy, case dtype) and its residual tensors (case layout)."""

    case: Case
    constants: tuple[dict[str, np.ndarray], ...]
    residuals: dict[str, Any] = field(default_factory=dict)

    def view(self, nc: bool) -> tuple[int, ...]:
        """The broadcast shape of a per-channel vector in the call's layout."""
        r = self.case.rank
        return (1, -1, *(1,) * r) if nc else (1, *(1,) * r, -1)

    def _moved(self, nc: bool) -> bool:
        """Whether the residuals must be transposed to the call's layout (a channels_first case run in N*C)."""
        return nc != (not self.case.channels_last)

    def _residual(self, tf: Any, i: int, nc: bool) -> Any:
        """residual i in the call's layout."""
        r = self.residuals[f"residual{i}"]
        return tf.transpose(r, layout_perms(self.case.rank)[0]) if self._moved(nc) else r

    def _residual_lines(self, i: int, nc: bool) -> list[str]:
        """The line that moves residual i to the call's layout (if any)."""
        if not self._moved(nc):
            return []
        to_last, _ = layout_perms(self.case.rank)
        return [f"residual{i} = tf.transpose(residual{i}, {to_last})  # to the call's N*C"]

    def _scalar(self, i: int) -> float:
        return float(np.asarray(self.constants[i]["c"], dtype=np.float64))

    def tf_lines(self, nc: bool) -> list[str]:
        """The lines `apply_tf` runs (pure: the reproducers print the same)."""
        view = self.view(nc)
        lines: list[str] = []
        for i, name in enumerate(self.case.epilogue):
            if name in TF_ACTIVATIONS:
                lines.append(f"y = {TF_ACTIVATIONS[name]}")
            elif name == "residual":
                lines += [*self._residual_lines(i, nc), f"y = tf.add(y, residual{i})  # an input of y's shape"]
            elif name == "batch_norm":
                lines.append(f"y = tf.nn.batch_normalization(y, *(tf.reshape(t, {list(view)}) for t in "
                             f"(bn{i}_mean, bn{i}_var, bn{i}_beta, bn{i}_gamma)), {BATCH_NORM_EPS})")
            elif name in ("mul_scalar", "add_scalar"):
                lines.append(f"y = tf.{'multiply' if name == 'mul_scalar' else 'add'}(y, {self._scalar(i)!r})")
            else:
                fn = {"scale": "multiply", "divide": "math.divide", "shift": "add"}[name]
                lines.append(f"y = tf.{fn}(y, tf.reshape({name}{i}, {list(view)}))")
        return lines

    def apply_tf(self, tf: Any, y: Any, nc: bool) -> tuple[Any, list[str]]:
        """y after the epilogue in tf ops, and the lines that did it (tf_lines)."""
        view = self.view(nc)
        for i, name in enumerate(self.case.epilogue):
            consts = self.constants[i]
            if name in TF_ACTIVATIONS:
                y = _tf_activation(tf, name, y)
            elif name == "residual":
                y = tf.add(y, self._residual(tf, i, nc))
            elif name == "batch_norm":
                m, v, g, b = (tf.reshape(tf.constant(consts[k]), view) for k in BN_KEYS)
                y = tf.nn.batch_normalization(y, m, v, b, g, BATCH_NORM_EPS)
            elif name in ("mul_scalar", "add_scalar"):
                c = self._scalar(i)
                y = tf.multiply(y, c) if name == "mul_scalar" else tf.add(y, c)
            else:
                c = tf.reshape(tf.constant(consts["c"]), view)
                y = {"scale": tf.multiply, "divide": tf.math.divide, "shift": tf.add}[name](y, c)
        return y, self.tf_lines(nc)

    def keras_lines(self, nc: bool) -> list[str]:
        """The lines `apply_keras` runs (pure: the reproducers print the same)."""
        view = self.view(nc)
        dtype = self.case.dtype
        lines: list[str] = []
        for i, name in enumerate(self.case.epilogue):
            if name in KERAS_LAYERS:
                ctor, comment = KERAS_LAYERS[name]
                lines.append(f"y = keras.layers.{ctor}dtype={dtype!r})(y){comment}")
            elif name == "clamp":
                lines.append(f"y = keras.ops.clip(y, {CLAMP_RANGE[0]}, {CLAMP_RANGE[1]})  # no clip layer")
            elif name == "residual":
                lines += [*self._residual_lines(i, nc), f"y = keras.layers.Add(dtype={dtype!r})([y, residual{i}])"]
            elif name == "batch_norm":
                axis = 1 if nc else -1
                lines += [f"bn = keras.layers.BatchNormalization(axis={axis}, epsilon={BATCH_NORM_EPS}, dtype={dtype!r})",
                          f"bn.build(y.shape); bn.set_weights([bn{i}_gamma, bn{i}_beta, bn{i}_mean, bn{i}_var])",
                          "y = bn(y, training=False)"]
            elif name in ("mul_scalar", "add_scalar"):
                op = "multiply" if name == "mul_scalar" else "add"
                lines.append(f"y = keras.ops.{op}(y, {self._scalar(i)!r})")
            else:
                op = {"scale": "multiply", "divide": "divide", "shift": "add"}[name]
                lines.append(f"y = keras.ops.{op}(y, keras.ops.reshape({name}{i}, {list(view)}))")
        return lines

    def apply_keras(self, y: Any, nc: bool) -> tuple[Any, list[str]]:
        """y after the epilogue in Keras layers (keras.ops where there is none), and the lines (keras_lines)."""
        import keras
        import tensorflow as tf

        view = self.view(nc)
        dtype = self.case.dtype
        for i, name in enumerate(self.case.epilogue):
            consts = self.constants[i]
            if name in KERAS_LAYERS:
                y = _keras_layer(keras, name, dtype)(y)
            elif name == "clamp":
                y = keras.ops.clip(y, *CLAMP_RANGE)
            elif name == "residual":
                y = keras.layers.Add(dtype=dtype)([y, self._residual(tf, i, nc)])
            elif name == "batch_norm":
                axis = 1 if nc else -1
                bn = keras.layers.BatchNormalization(axis=axis, epsilon=BATCH_NORM_EPS, dtype=dtype)
                bn.build(tuple(y.shape))
                bn.set_weights([consts["gamma"], consts["beta"], consts["mean"], consts["var"]])
                y = bn(y, training=False)
            elif name in ("mul_scalar", "add_scalar"):
                op = "multiply" if name == "mul_scalar" else "add"
                y = getattr(keras.ops, op)(y, self._scalar(i))
            else:
                c = keras.ops.reshape(keras.ops.convert_to_tensor(consts["c"]), view)
                op = {"scale": "multiply", "divide": "divide", "shift": "add"}[name]
                y = getattr(keras.ops, op)(y, c)
        return y, self.keras_lines(nc)
