"""How a case becomes one tf.nn call: padding resolved to TF's SAME / VALID / explicit pairs, the exact identities
that stand in for what tf.nn cannot state (pad then VALID; VALID transpose then crop), and the layout strings.
Pure: no TensorFlow import. tf.nn's backend (eager.py), Keras (keras.py), LiteRT and the reproducers share it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backends.pads import stated_pads
from backends.tensorflow.util import layout_perms
from harness.model.case import Case

Pairs = list[tuple[int, int]]


def resolve(case: Case) -> tuple[Pairs, list[int], list[int], list[int]]:
    """Per-dim pads, tail extension, output size and full (VALID) transpose size; also for invalid cases."""
    ke = [d * (k - 1) + 1 for k, d in zip(case.kernel_size, case.dilation)]
    full = [(n - 1) * s + k for n, s, k in zip(case.input_size, case.stride, ke)]
    if case.geometry is not None:
        g = case.geometry
        return list(g.pads), list(g.extend), list(g.out_size), full
    pads = stated_pads(case)
    ext = list(case.output_padding) if case.transpose and case.output_padding else [0] * case.rank
    if case.transpose:
        out = [f + e - b - a for f, e, (b, a) in zip(full, ext, pads)]
    else:  # a stride below 1 has no output size: 0 (TF is handed the stride itself)
        out = [(n + b + a - k) // s + 1 if s >= 1 else 0 for n, (b, a), k, s in zip(case.input_size, pads, ke, case.stride)]
    return pads, ext, out, full


def same_pads(case: Case) -> Pairs | None:
    """TF SAME input pads of a forward conv (total//2 before, the rest after); None for a stride below 1 (an
    invalid case's), which has no SAME."""
    if min(case.stride) < 1:
        return None
    out = []
    for n, k, s, d in zip(case.input_size, case.kernel_size, case.stride, case.dilation):
        total = max((-(-n // s) - 1) * s + d * (k - 1) + 1 - n, 0)
        out.append((total // 2, total - total // 2))
    return out


def same_transpose_matches(case: Case, pads: Pairs, out: list[int], full: list[int]) -> bool:
    """Whether TF SAME with output_shape=out crops exactly `pads` (TF derives the crop from out)."""
    for n, s, (pb, _), o, f in zip(case.input_size, case.stride, pads, out, full):
        if o < 1 or s < 1 or -(-o // s) != n or pb != max(f - o, 0) // 2:
            return False
    return True


def in_nc_only(rank: int, lines: list[str]) -> list[str]:
    """The code of an N*C call wrapped in the layout transposes (the channels_first fallback)."""
    to_last, back = layout_perms(rank)
    return [f"x = tf.transpose(x, {to_last})", *lines, f"y = tf.transpose(y, {back})"]


def crop_code(crop: Pairs, nc: bool) -> str:
    idx = ", ".join(f"{pb}:{-pa or None}" for pb, pa in crop)
    return f"y = y[:, :, {idx}]" if nc else f"y = y[:, {idx}, :]"


def crop_output(y: Any, crop: Pairs, nc: bool) -> Any:
    # the end counted from the back (as crop_code writes it): inside a tf.function an output length TF cannot
    # infer statically (a negative stride's output_shape) is None, and y.shape[i] - pa would fail in the adapter
    sl = tuple(slice(pb, -pa or None) for pb, pa in crop)
    return y[(slice(None), slice(None), *sl)] if nc else y[(slice(None), *sl, slice(None))]


@dataclass(frozen=True)
class NnCall:
    """Every decision TensorFlowBackend makes for one case and layout, without tensors.

    The adapter executes it and records lines(); `convdiff repro` prints the same lines.
    """

    fn_name: str
    strides: list[int]
    dilations: list[int]
    padding: Any
    data_format: str
    pad_input: list[Any] | None = None    # tf.pad before a VALID conv
    output_shape: list[int] | None = None  # transposed ops only
    pad_output: list[Any] | None = None   # zero tail after a VALID transpose
    crop: Pairs | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def nc(self) -> bool:
        return self.data_format.startswith("NC")

    @property
    def path(self) -> str:
        """The route (Output.path): "pad-valid" (tf.pad, then a VALID conv), "valid-pad-crop" (a VALID transpose,
        its tail padded where output_padding >= stride, then cropped), or "" for the direct call."""
        if self.pad_input is not None:
            return "pad-valid"
        return "valid-pad-crop" if self.crop or self.pad_output is not None else ""

    @property
    def bias_format(self) -> str:
        return "NC..." if self.nc else "N...C"

    def lines(self, bias: bool) -> list[str]:
        """The calls as a user would write them (x, w, b, tf in scope; result in y)."""
        out = [] if self.pad_input is None else [f"x = tf.pad(x, {self.pad_input})"]
        if self.output_shape is None:
            out.append(f"y = tf.nn.{self.fn_name}(x, w, {self.strides}, {self.padding!r}, "
                       f"data_format={self.data_format!r}, dilations={self.dilations})")
        else:
            out.append(f"y = tf.nn.{self.fn_name}(x, w, output_shape={self.output_shape}, strides={self.strides}, "
                       f"padding={self.padding!r}, data_format={self.data_format!r}, dilations={self.dilations})")
        if self.pad_output is not None:
            out.append(f"y = tf.pad(y, {self.pad_output})  # output_padding >= stride: tail no input reaches")
        if self.crop:
            out.append(crop_code(self.crop, self.nc))
        if bias:
            out.append(f"y = tf.nn.bias_add(y, b, data_format={self.bias_format!r})")
        return out


def nn_call(case: Case, nc: bool) -> NnCall:
    """TensorFlowBackend's translation of a case into tf.nn calls, x in NC* (nc) or N*C."""
    r = case.rank
    fmt = tf_format(r, nc)
    pads, ext, out, full = resolve(case)
    strides, dil = full_layout(list(case.stride), nc, 1), full_layout(list(case.dilation), nc, 1)
    fn_name = f"conv{r}d" + ("_transpose" if case.transpose else "")
    notes: list[str] = []
    zero = all(p == (0, 0) for p in pads)
    if not case.transpose:
        pad_input = None
        if case.padding in ("same", "valid"):
            padding: Any = case.padding.upper()
        elif r == 2:
            padding = full_layout([list(p) for p in pads], nc, [0, 0])
        elif zero:
            padding = "VALID"
        elif pads == same_pads(case):
            padding = "SAME"
        else:
            pad_input = full_layout([list(p) for p in pads], nc, [0, 0])
            notes.append(f"conv{r}d has no explicit padding: tf.pad the input, then VALID")
            padding = "VALID"
        return NnCall(fn_name, strides, dil, padding, fmt, pad_input=pad_input, notes=notes)
    crop: Pairs | None = None
    tail = [0] * r
    shape = out
    if case.padding in ("same", "valid"):
        padding = case.padding.upper()
    elif zero and all(e < s for e, s in zip(ext, case.stride)):
        padding = "VALID"
    elif r == 2 and all(e < s for e, s in zip(ext, case.stride)):  # TF infers output_padding < stride only
        padding = full_layout([list(p) for p in pads], nc, [0, 0])
    elif same_transpose_matches(case, pads, out, full) and (case.geometry is not None or (
            all(e < s for e, s in zip(ext, case.stride)) and min(min(p) for p in pads) >= 0)):
        # not for an invalid output_padding >= stride: SAME takes any output length that rounds up to the input
        # (ceil(out / stride) == n), so TF would be handed a valid call and never see what makes the case invalid;
        # nor for an invalid negative pad, which is what SAME crops when the kernel is shorter than the stride
        padding = "SAME"
    else:
        padding = "VALID"
        # a valid case's tail beyond stride holds only bias: append it; an invalid one goes to TF as is
        native = [e if e < s or case.geometry is None else 0 for e, s in zip(ext, case.stride)]
        tail = [e - n for e, n in zip(ext, native)]
        shape = [f + n for f, n in zip(full, native)]
        crop = pads
        notes.append(f"conv{r}d_transpose has no explicit padding: VALID with output_shape "
                     "(full + output_padding), then crop the padding")
    oshape = [case.batch, case.out_channels, *shape] if nc else [case.batch, *shape, case.out_channels]
    pad_output = None
    if any(tail):
        pad_output = full_layout([[0, t] for t in tail], nc, [0, 0])
        notes.append("output_padding >= stride: zero tail appended after VALID (bias added after)")
    return NnCall(fn_name, strides, dil, padding, fmt, output_shape=oshape, pad_output=pad_output,
                  crop=crop, notes=notes)


def tf_format(rank: int, nc: bool) -> str:
    sp = {1: "W", 2: "HW", 3: "DHW"}[rank]
    return f"NC{sp}" if nc else f"N{sp}C"


def full_layout(vals: list[Any], nc: bool, fill: Any) -> list[Any]:
    return [fill, fill, *vals] if nc else [fill, *vals, fill]
