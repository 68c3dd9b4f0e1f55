"""Keras side of `convdiff extract` (run as `python -m harness.commands.extract.keras_probe`, in its own process).

One forward pass on random data with each convolution layer's `call` wrapped: the wrapper
sees the actual input and output of every call (shared layers once per call, nested models
included). Conv{1,2,3}D and Conv{1,2,3}DTranspose are one convolution each; DepthwiseConv*D
is a grouped convolution (groups = channels, out = channels * depth_multiplier);
SeparableConv*D is its depthwise convolution (no bias) then a 1x1 pointwise one. padding
'same'/'valid' stay as they are ('causal' is its left padding), data_format is the layout.
A transposed layer's length is what Keras asked TensorFlow for (its output_shape): SAME
without output_padding stays `same`; otherwise the crop and tail that give that length.
"""

from __future__ import annotations

import os
import sys
from typing import Any

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras
import numpy as np

from harness.commands.extract.layer import LayerConv, transpose_crop
from harness.commands.extract.probe_io import ProbeError, main, resolve_spec

KINDS = (keras.layers.Conv1D, keras.layers.Conv2D, keras.layers.Conv3D, keras.layers.Conv1DTranspose,
         keras.layers.Conv2DTranspose, keras.layers.Conv3DTranspose, keras.layers.DepthwiseConv1D,
         keras.layers.DepthwiseConv2D, keras.layers.SeparableConv1D, keras.layers.SeparableConv2D)


def _tuple(v: Any, rank: int) -> tuple[int, ...]:
    return tuple(int(x) for x in v) if isinstance(v, list | tuple) else (int(v),) * rank


def _forward_padding(layer: Any, kernel: tuple[int, ...], dilation: tuple[int, ...]) -> Any:
    if layer.padding == "causal":
        return tuple((d * (k - 1), 0) for k, d in zip(kernel, dilation))
    return layer.padding


def _spatial(shape: tuple[int, ...], channels_last: bool) -> tuple[tuple[int, ...], int]:
    return (tuple(shape[1:-1]), shape[-1]) if channels_last else (tuple(shape[2:]), shape[1])


def describe(layer: Any, x_shape: tuple[int, ...], y_shape: tuple[int, ...], dtype: str) -> list[LayerConv]:
    rank = len(x_shape) - 2
    last = layer.data_format == "channels_last"
    size, cin = _spatial(x_shape, last)
    out_size, cout = _spatial(y_shape, last)
    kernel = _tuple(layer.kernel_size, rank)
    stride = _tuple(layer.strides, rank)
    dilation = _tuple(layer.dilation_rate, rank)
    common = dict(batch=int(x_shape[0]) or 1, layout="channels_last" if last else "channels_first", dtype=dtype,
                  stride=stride, dilation=dilation, kernel_size=kernel)
    if isinstance(layer, keras.layers.SeparableConv1D | keras.layers.SeparableConv2D):
        mid = cin * layer.depth_multiplier
        pad = _forward_padding(layer, kernel, dilation)
        depthwise = LayerConv(name=f"{layer.name}/depthwise", op=f"conv{rank}d", in_channels=cin, out_channels=mid,
                              input_size=size, padding=pad, output_padding=(0,) * rank, groups=cin, bias=False,
                              **common)
        mid_size = _conv_out(size, kernel, stride, dilation, pad)
        common.update(stride=(1,) * rank, dilation=(1,) * rank, kernel_size=(1,) * rank)
        pointwise = LayerConv(name=f"{layer.name}/pointwise", op=f"conv{rank}d", in_channels=mid, out_channels=cout,
                              input_size=mid_size, padding="valid", output_padding=(0,) * rank, groups=1,
                              bias=bool(layer.use_bias), out_size=out_size, **common)
        return [depthwise, pointwise]
    if isinstance(layer, keras.layers.DepthwiseConv1D | keras.layers.DepthwiseConv2D):
        return [LayerConv(name=layer.name, op=f"conv{rank}d", in_channels=cin, out_channels=cout, input_size=size,
                          padding=_forward_padding(layer, kernel, dilation), output_padding=(0,) * rank, groups=cin,
                          bias=bool(layer.use_bias), out_size=out_size, **common)]
    if "Transpose" in type(layer).__name__:
        padding: Any = layer.padding
        extend = (0,) * rank
        if layer.output_padding is not None or padding != "same":
            pairs, ext = [], []
            for n, k, s, d, o in zip(size, kernel, stride, dilation, out_size):
                crop, tail = transpose_crop((n - 1) * s + d * (k - 1) + 1, o, upper=True)
                pairs.append(crop)
                ext.append(tail)
            padding, extend = tuple(pairs), tuple(ext)
            if layer.padding == "valid" and not any(extend) and not any(map(any, pairs)):
                padding = "valid"
        return [LayerConv(name=layer.name, op=f"conv_transpose{rank}d", in_channels=cin, out_channels=cout,
                          input_size=size, padding=padding, output_padding=extend, groups=1,
                          bias=bool(layer.use_bias), out_size=out_size, **common)]
    return [LayerConv(name=layer.name, op=f"conv{rank}d", in_channels=cin, out_channels=cout, input_size=size,
                      padding=_forward_padding(layer, kernel, dilation), output_padding=(0,) * rank,
                      groups=int(getattr(layer, "groups", 1)), bias=bool(layer.use_bias), out_size=out_size, **common)]


def _conv_out(size, kernel, stride, dilation, padding) -> tuple[int, ...]:
    out = []
    for i, (n, k, s, d) in enumerate(zip(size, kernel, stride, dilation)):
        ke = d * (k - 1) + 1
        if padding == "same":
            out.append(-(-n // s))
        elif padding == "valid":
            out.append(-(-(n - ke + 1) // s))
        else:
            out.append((n + sum(padding[i]) - ke) // s + 1)
    return tuple(out)


def load_model(model: str) -> Any:
    if model.endswith((".keras", ".h5")):
        try:
            return keras.saving.load_model(model, compile=False)
        except (OSError, ValueError) as exc:
            raise ProbeError(f"cannot load the Keras model: {str(exc).splitlines()[0]}") from None
    return resolve_spec(model, keras.Model, "Keras model")


def probe(model: str, input_shape: list[int] | None, **_: Any) -> list[LayerConv]:
    m = load_model(model)
    if input_shape is None:
        inputs = getattr(m, "inputs", None) or []
        if len(inputs) != 1 or any(d is None for d in inputs[0].shape[1:]):
            raise ProbeError("give --input-shape (in the model's own layout): the model has no single static input")
        input_shape = [1, *inputs[0].shape[1:]]
    dtype = keras.backend.standardize_dtype(m.dtype_policy.compute_dtype if hasattr(m, "dtype_policy") else "float32")
    seen: list[LayerConv] = []
    for layer in m._flatten_layers(include_self=False, recursive=True):
        if isinstance(layer, KINDS):
            call = layer.call

            def wrapped(x: Any, *args: Any, _call: Any = call, _layer: Any = layer, **kwargs: Any) -> Any:
                y = _call(x, *args, **kwargs)
                seen.extend(describe(_layer, tuple(x.shape), tuple(y.shape), dtype))
                return y

            layer.call = wrapped
    x = np.random.default_rng(0).standard_normal(input_shape).astype(dtype)
    try:
        m(x, training=False)
    except Exception as exc:  # noqa: BLE001  (the user's model may raise anything: say so in one line)
        raise ProbeError(f"the model's forward pass failed on input {tuple(input_shape)}: "
                         f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    return seen


if __name__ == "__main__":
    sys.exit(main(probe))
