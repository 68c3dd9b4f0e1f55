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
# What one tensor of an `expect: invalid` case may be (input_dtype, weight_dtype, bias_dtype): besides the
# case dtypes, integer and complex tensors, which no float convolution takes and no quantized one takes as given.
INTEGER_DTYPES = ("int8", "uint8", "int16", "int32", "int64")
COMPLEX_DTYPES = ("complex64", "complex128")
TENSOR_DTYPES = (*FLOAT_DTYPES, *INTEGER_DTYPES, *COMPLEX_DTYPES)
# `padding: same` by whose definition: TensorFlow's (canonical: any stride) or torch's padding='same' (stride 1 only,
# forward convolutions only); where both are defined they pad alike.
SAME_CONVENTIONS = ("tensorflow", "torch")
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
    # Fields added to schema v1 later: params() carries them only when they differ from these defaults, so the
    # cases written before them keep their records and artefact keys.
    unbatched: bool = False  # x and the output have no batch axis (torch's unbatched form); batch is then 1
    same_convention: str = "tensorflow"  # SAME_CONVENTIONS: whose `padding: same` the case means
    # expect: invalid only: the tensors as given, where they are not what the other fields imply
    weight_shape_given: tuple[int, ...] | None = None  # YAML `weight_shape`: any rank, any channel counts
    input_dtype: str | None = None  # TENSOR_DTYPES; None: `dtype`
    weight_dtype: str | None = None
    bias_dtype: str | None = None
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
        """conv (C_out, C_in/g, *k); conv_transpose (C_in, C_out/g, *k); an invalid case's `weight_shape` as given."""
        if self.weight_shape_given is not None:
            return self.weight_shape_given
        g = max(self.groups, 1)
        if self.transpose:
            return (self.in_channels, self.out_channels // g, *self.kernel_size)
        return (self.out_channels, self.in_channels // g, *self.kernel_size)

    def data_shape(self, channels: int, spatial: tuple[int, ...]) -> tuple[int, ...]:
        batch = () if self.unbatched else (self.batch,)
        if self.channels_last:
            return (*batch, *spatial, channels)
        return (*batch, channels, *spatial)

    @property
    def tensor_dtypes(self) -> tuple[str, str, str | None]:
        """The dtypes of x, w and b (None without a bias) as the framework is given them. A quantized case's
        are its storage dtypes (activations in `dtype`, int8 weights, int32 bias)."""
        if self.quantized:
            return self.dtype, "int8", "int32" if self.bias else None
        bias = (self.bias_dtype or self.dtype) if self.bias else None
        return self.input_dtype or self.dtype, self.weight_dtype or self.dtype, bias

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
        if not self.gradients or self.expect == "invalid" or self.epilogue or self.quantized or self.unbatched:
            return ()  # an epilogue (or unbatched) case judges its forward output only (no adjoint for it yet)
        return GRAD_OUTPUTS if self.bias else GRAD_OUTPUTS[:2]

    def params(self) -> dict[str, Any]:
        """The canonical case as a plain mapping (for records and reports), in the YAML's field names; the
        fields added later (LATER_FIELDS) only where they differ from their default."""
        d: dict[str, Any] = {}
        for f in fields(self):  # not asdict(self): it deep-copies the geometry only to drop it
            if f.name in ("geometry", "file", "line", "id"):
                continue
            v = getattr(self, f.name)
            if f.name in LATER_FIELDS and v == f.default:
                continue
            if isinstance(v, Quant):
                v = asdict(v)
            elif isinstance(v, tuple):
                v = [list(p) if isinstance(p, tuple) else p for p in v]
            d[YAML_NAMES.get(f.name, f.name)] = v
        return d


# Case fields that params() leaves out at their default (added to schema v1 after cases were recorded), and the
# YAML names of the Case fields whose own name differs (a property holds the YAML name).
LATER_FIELDS = ("unbatched", "same_convention", "weight_shape_given", "input_dtype", "weight_dtype", "bias_dtype")
YAML_NAMES = {"weight_shape_given": "weight_shape"}


def later_defaults() -> dict[str, Any]:
    """The LATER_FIELDS' defaults by their YAML names: what a case that leaves them out means (a `when` reads them)."""
    return {YAML_NAMES.get(f.name, f.name): f.default for f in fields(Case) if f.name in LATER_FIELDS}


def param_names() -> tuple[str, ...]:
    """The keys Case.params() may have: what a known issue's selector or `when` can read of a case."""
    return tuple(YAML_NAMES.get(f.name, f.name) for f in fields(Case) if f.name not in ("geometry", "file", "line", "id"))


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
    """Explicit pads, tail extension and output size, per ARCHITECTURE.md. Total over any integers: a stride or
    dilation below 1 (an invalid case's) gives its axis the stated pads (zeros for a mode) and output size 0."""
    pads: list[tuple[int, int]] = []
    extend: list[int] = []
    out: list[int] = []
    for i, (n, k, s, d) in enumerate(zip(input_size, kernel_size, stride, dilation)):
        if s < 1 or d < 1:
            pads.append((0, 0) if isinstance(padding, str) else padding[i])
            extend.append(0)
            out.append(0)
            continue
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
