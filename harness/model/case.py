"""The canonical convolution case: one frozen value every part of the harness agrees on.

Semantics are PyTorch's unless stated (see ARCHITECTURE.md). Everything here is
rank-generic: the rank is the length of the per-dimension tuples.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
FLOAT_DTYPES = ("float32", "float64", "float16", "bfloat16")
QUANT_DTYPES = ("uint8", "int8")  # a quantized conv: activations and output in this dtype, int8 weights
DTYPES = (*FLOAT_DTYPES, *QUANT_DTYPES)
QUANT_RANGES = ("full", "narrow")
LAYOUTS = ("channels_first", "channels_last")
DATA_KINDS = ("normal", "uniform", "integers")
TIERS = ("smoke", "full")
PADDING_MODES = ("same", "valid")
GRAD_OUTPUTS = ("grad_input", "grad_weight", "grad_bias")
OUTPUTS = ("out", *GRAD_OUTPUTS)  # what one record judges: the forward result or one gradient
# What may follow the conv, applied in order to y = conv(x, w) + b (ARCHITECTURE.md, "Epilogue").
EPILOGUE_CONSTANTS = ("scale", "divide", "shift", "mul_scalar", "add_scalar", "batch_norm")
EPILOGUE_ACTIVATIONS = ("relu", "relu6", "leaky_relu", "sigmoid", "tanh", "gelu", "hardswish", "silu", "clamp")
EPILOGUE_OPS = (*EPILOGUE_CONSTANTS, *EPILOGUE_ACTIVATIONS, "residual")
LEAKY_SLOPE = 0.1
CLAMP_RANGE = (-1.0, 1.0)
BATCH_NORM_EPS = 1e-5

Pairs = tuple[tuple[int, int], ...]


def op_rank(op: str) -> int:
    return int(op[-2])


def op_is_transpose(op: str) -> bool:
    return op.startswith("conv_transpose")


def op_family(op: str) -> str:
    """`conv` or `conv_transpose`: the op without its rank."""
    return op[:-2]


@dataclass(frozen=True)
class Geometry:
    """Explicit per-dimension padding, the form the oracle and adapters start from.

    conv: the input is padded by `pads` (before, after), then a VALID convolution.
    conv_transpose: the full (VALID) output is extended by `extend` elements at the
    end (output_padding, or SAME's missing tail), then `pads` are cropped.
    """

    pads: Pairs
    extend: tuple[int, ...]
    out_size: tuple[int, ...]


@dataclass(frozen=True)
class Quant:
    """How a quantized case is quantized (`quant:`); None values are drawn from the seed
    (y's calibrated from the float reference output's range, as a user's tooling does)."""

    per_channel: bool = False
    range: str = "full"  # full: values over the whole dtype; narrow: near the zero point
    x_scale: float | None = None
    x_zero_point: int | None = None
    w_scale: float | tuple[float, ...] | None = None
    w_zero_point: int | None = None
    y_scale: float | None = None
    y_zero_point: int | None = None


@dataclass(frozen=True)
class Case:
    id: str
    op: str
    in_channels: int
    out_channels: int
    input_size: tuple[int, ...]
    kernel_size: tuple[int, ...]
    batch: int = 1
    stride: tuple[int, ...] = ()
    padding: Pairs | str = ()
    output_padding: tuple[int, ...] = ()
    dilation: tuple[int, ...] = ()
    groups: int = 1
    bias: bool = False
    layout: str = "channels_first"
    dtype: str = "float32"
    data: str = "normal"
    seed: int = 0
    expect: str = "valid"
    tier: str = "full"
    tags: tuple[str, ...] = ()
    gradients: bool = False  # also judge grad_input, grad_weight (and grad_bias with a bias)
    epilogue: tuple[str, ...] = ()  # EPILOGUE_OPS applied in order after the bias
    quant: Quant | None = None  # set exactly when dtype is a QUANT_DTYPES one
    file: str = ""
    line: int = 0
    geometry: Geometry | None = field(default=None, compare=False, repr=False)

    # ---- structure -------------------------------------------------------
    @property
    def rank(self) -> int:
        return op_rank(self.op)

    @property
    def transpose(self) -> bool:
        return op_is_transpose(self.op)

    @property
    def family(self) -> str:
        return op_family(self.op)

    @property
    def quantized(self) -> bool:
        return self.dtype in QUANT_DTYPES

    @property
    def channels_last(self) -> bool:
        return self.layout == "channels_last"

    @property
    def weight_shape(self) -> tuple[int, ...]:
        """conv (C_out, C_in/g, *k); conv_transpose (C_in, C_out/g, *k)."""
        g = max(self.groups, 1)
        if self.transpose:
            return (self.in_channels, self.out_channels // g, *self.kernel_size)
        return (self.out_channels, self.in_channels // g, *self.kernel_size)

    def data_shape(self, channels: int, spatial: tuple[int, ...]) -> tuple[int, ...]:
        if self.channels_last:
            return (self.batch, *spatial, channels)
        return (self.batch, channels, *spatial)

    @property
    def input_shape(self) -> tuple[int, ...]:
        return self.data_shape(self.in_channels, self.input_size)

    @property
    def output_shape(self) -> tuple[int, ...]:
        assert self.geometry is not None, "invalid case has no output shape"
        return self.data_shape(self.out_channels, self.geometry.out_size)

    @property
    def accumulation_length(self) -> int:
        """K: the most products summed into one output element."""
        return (self.in_channels // max(self.groups, 1)) * math.prod(self.kernel_size)

    @property
    def gradient_outputs(self) -> tuple[str, ...]:
        """The gradients this case judges: none, or grad_input, grad_weight (and grad_bias with a bias)."""
        if not self.gradients or self.expect == "invalid" or self.epilogue or self.quantized:
            return ()  # an epilogue case judges its forward output only (no adjoint of the epilogue yet)
        return GRAD_OUTPUTS if self.bias else GRAD_OUTPUTS[:2]

    def params(self) -> dict[str, Any]:
        """The canonical case as a plain mapping (for records and reports)."""
        d: dict[str, Any] = {}
        for f in fields(self):  # not asdict(self): it deep-copies the geometry only to drop it
            if f.name in ("geometry", "file", "line", "id"):
                continue
            v = getattr(self, f.name)
            if isinstance(v, Quant):
                v = asdict(v)
            elif isinstance(v, tuple):
                v = [list(p) if isinstance(p, tuple) else p for p in v]
            d[f.name] = v
        return d


# ---- geometry ---------------------------------------------------------------
def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def effective_kernel(k: int, d: int) -> int:
    return d * (k - 1) + 1


def resolve_geometry(
    transpose: bool,
    input_size: tuple[int, ...],
    kernel_size: tuple[int, ...],
    stride: tuple[int, ...],
    padding: Pairs | str,
    output_padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> Geometry:
    """Explicit pads, tail extension and output size, per ARCHITECTURE.md."""
    pads: list[tuple[int, int]] = []
    extend: list[int] = []
    out: list[int] = []
    for i, (n, k, s, d) in enumerate(zip(input_size, kernel_size, stride, dilation)):
        ke = effective_kernel(k, d)
        op = output_padding[i] if output_padding else 0
        if not transpose:
            if padding == "same":
                total = max((_ceil_div(n, s) - 1) * s + ke - n, 0)
                pb, pa = total // 2, total - total // 2
            elif padding == "valid":
                pb, pa = 0, 0
            else:
                pb, pa = padding[i]
            pads.append((pb, pa))
            extend.append(0)
            out.append((n + pb + pa - ke) // s + 1)
        else:
            full = (n - 1) * s + ke
            if padding == "same":
                target = n * s
                crop = max(full - target, 0)
                pb, pa = crop // 2, crop - crop // 2
                ext = max(target - full, 0)
            elif padding == "valid":
                pb, pa, ext = 0, 0, 0
            else:
                (pb, pa), ext = padding[i], op
            pads.append((pb, pa))
            extend.append(ext)
            out.append(full + ext - pb - pa)
    return Geometry(tuple(pads), tuple(extend), tuple(out))
