"""`tensorflow-keras`: Keras layers (Conv{1,2,3}D, Conv{1,2,3}DTranspose) holding the case's weights.

What people porting models call; its argument checks differ from tf.nn's. Shares the
TensorFlow plumbing (layouts, identities, dtype handling) with backends/tensorflow/eager.py.
An epilogue runs as Keras layers after the conv layer, in its data_format (backends/tensorflow/epilogue.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backends.base import Backend, Capabilities
from backends.tensorflow.eager import TFBase
from backends.tensorflow.epilogue import KERAS_EPILOGUE_OPS, Epilogue
from backends.tensorflow.translate import (
    Pairs,
    crop_code,
    crop_output,
    full_layout,
    resolve,
    same_pads,
    same_transpose_matches,
)
from harness.model.case import Case


@dataclass(frozen=True)
class LayerCall:
    """Every decision KerasBackend makes for one case and layout, without tensors (see NnCall)."""

    cls: str
    filters: int
    kernel_size: tuple[int, ...]
    kwargs: dict[str, Any]
    data_format: str
    dtype: str
    pad_input: list[Any] | None = None  # keras.ops.pad before a 'valid' conv
    crop: Pairs | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The route (Output.path): "pad-valid" (the input padded, then 'valid'), "valid-pad-crop" ('valid'
        with output_padding, then cropped), or "" for the layer's own padding."""
        return "pad-valid" if self.pad_input is not None else "valid-pad-crop" if self.crop else ""

    def lines(self, bias: bool, input_shape: str) -> list[str]:
        """The calls as a user would write them; input_shape is the source text of the built shape."""
        out = [] if self.pad_input is None else [f"x = keras.ops.pad(x, {self.pad_input})"]
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        out += [f"layer = keras.layers.{self.cls}({self.filters}, {self.kernel_size}, {args}, "
                f"data_format={self.data_format!r}, use_bias={bias}, dtype={self.dtype!r})",
                f"layer.build({input_shape}); layer.set_weights([w{', b' if bias else ''}])",
                "y = layer(x)"]
        if self.crop:
            out.append(crop_code(self.crop, self.data_format == "channels_first"))
        return out


def layer_call(case: Case, nc: bool) -> LayerCall:
    """KerasBackend's translation of a case into a Keras layer, x in NC* (nc) or N*C."""
    r = case.rank
    pads, ext, out, full = resolve(case)
    notes: list[str] = []
    crop: Pairs | None = None
    pad_input = None
    kw: dict[str, Any] = {"strides": case.stride, "dilation_rate": case.dilation}
    zero = all(p == (0, 0) for p in pads)
    if not case.transpose:
        cls = f"Conv{r}D"
        kw["groups"] = case.groups
        if case.padding in ("same", "valid"):
            kw["padding"] = case.padding
        elif zero:
            kw["padding"] = "valid"
        elif pads == same_pads(case):
            kw["padding"] = "same"
        elif r == 1 and pads == [(case.dilation[0] * (case.kernel_size[0] - 1), 0)]:
            kw["padding"] = "causal"
        else:
            pad_input = full_layout([list(p) for p in pads], nc, [0, 0])
            notes.append("keras conv padding is only 'valid'/'same'/'causal': pad the input, then 'valid'")
            kw["padding"] = "valid"
    else:
        cls = f"Conv{r}DTranspose"
        ke = [d * (k - 1) + 1 for k, d in zip(case.kernel_size, case.dilation)]
        if case.padding == "same":
            kw.update(padding="same", output_padding=None)
        elif case.padding == "valid":  # keras' default output_padding gives (L-1)*s + max(ke, s)
            op = None if all(k >= s for k, s in zip(ke, case.stride)) else tuple(ext)
            kw.update(padding="valid", output_padding=op)
        elif zero:
            kw.update(padding="valid", output_padding=tuple(ext))
        elif (not any(ext) and all(k % 2 and p == (k // 2, k // 2) for k, p in zip(ke, pads))
              and same_transpose_matches(case, pads, out, full)):
            kw.update(padding="same", output_padding=tuple(ext))  # keras: (L-1)*s + ke%2 + op
        else:
            kw.update(padding="valid", output_padding=tuple(ext))
            crop = pads
            notes.append("keras transpose padding is only 'valid'/'same': 'valid' + output_padding, "
                         "then crop the padding (extend first, so the kept tail holds real values)")
    df = "channels_first" if nc else "channels_last"
    return LayerCall(cls, case.out_channels, case.kernel_size, kw, df, case.dtype, pad_input, crop, notes)


class KerasBackend(TFBase):
    """keras.layers.Conv{1,2,3}D / Conv{1,2,3}DTranspose with the case's weights set via set_weights."""

    name = "tensorflow-keras"
    distribution = "keras"
    epilogue_ops = KERAS_EPILOGUE_OPS
    capabilities = Capabilities(
        padding=("same", "valid", "causal (conv1d)"),
        padding_identities=("conv pairs: keras.ops.pad then 'valid'",
                            "transpose pairs: 'valid' + output_padding, then crop"),
        output_padding="native (< stride)",
        dilation="conv (stride 1 only), transpose (stride 1 only)",
        groups="conv; transpose: none",
        layouts=("channels_last", "channels_first (data_format; transposed where TF has N*C only)"),
        gradients="tf.GradientTape (layer variables)",
    )
    layer: Any = None

    def version(self) -> str:
        return f"{super().version()} (keras {Backend.version(self)})"

    def supports(self, case: Case, device: str) -> str | None:
        if case.transpose and case.groups != 1:
            return f"transposed convolution with groups {case.groups}: keras ConvNDTranspose has no groups argument"
        if max(case.stride) > 1 and max(case.dilation) > 1:
            return "keras conv layers: strides > 1 together with dilation_rate > 1 is not supported"
        if case.geometry is None and any(p != (0, 0) for p in layer_call(case, True).crop or ()):
            return (f"{case.op}: keras ConvNDTranspose takes no explicit padding; the adapter crops it after "
                    "'valid', so an invalid case's padding would be judged by that crop, not by Keras")
        return None

    def route(self, case: Case) -> str:
        return layer_call(case, True).path

    def call(self, case: Case, x: Any, w: Any, b: Any, nc: bool,
             epi: Epilogue | None = None) -> tuple[Any, list[str], list[str]]:
        import keras

        plan = layer_call(case, nc)
        if plan.pad_input is not None:
            x = keras.ops.pad(x, plan.pad_input)
        # zeros, not Keras' random defaults: set_weights overwrites them, and drawing them was ~7% of a case
        layer = getattr(keras.layers, plan.cls)(plan.filters, plan.kernel_size, data_format=plan.data_format,
                                                use_bias=b is not None, dtype=plan.dtype, kernel_initializer="zeros",
                                                bias_initializer="zeros", **plan.kwargs)
        layer.build(tuple(x.shape))
        layer.set_weights([w] if b is None else [w, b])
        self.layer = layer  # its variables are the gradient sources (tensorflow/gradients.py)
        y = layer(x)
        lines = plan.lines(b is not None, repr(tuple(x.shape)))
        if plan.crop:
            y = crop_output(y, plan.crop, nc)
        if epi is not None:
            y, more = epi.apply_keras(y, nc)
            lines += more
        return y, lines, list(plan.notes)
