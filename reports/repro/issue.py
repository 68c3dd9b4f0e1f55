"""The words around one result's reproducer: its title and expected vs actual, for an upstream issue text
(`convdiff repro --issue`, and `convdiff upstream ID` for a known issue without a hand-written script)."""

from __future__ import annotations

from typing import Any

from harness.execution.records import Record

# Parameters at their default say nothing in a title; per-dimension ones are compared element-wise.
_DEFAULTS: dict[str, Any] = {"stride": 1, "output_padding": 0, "dilation": 1, "groups": 1}
SEMANTICS = ("PyTorch's documented convolution semantics (TensorFlow's for `padding: same/valid`), computed in "
             "float64 with NumPy")


def _all(value: Any, default: Any) -> bool:
    flat = [x for v in (value if isinstance(value, list) else [value]) for x in (v if isinstance(v, list) else [v])]
    return all(x == default for x in flat)


def _dims(value: Any) -> str:
    """[3, 3] as 3x3, [[1, 1], [0, 2]] as (1,1)x(0,2), a string as it is."""
    if isinstance(value, list):
        return "x".join(f"({','.join(map(str, v))})" if isinstance(v, list) else str(v) for v in value)
    return str(value)


def case_summary(params: dict[str, Any]) -> str:
    """The parameters that matter, in a few words: op, channels, sizes, the non-default geometry, dtype, extras."""
    p = params
    parts = [f"{p.get('op', '?')} {p.get('in_channels', '?')}->{p.get('out_channels', '?')}",
             f"input {_dims(p.get('input_size'))}", f"kernel {_dims(p.get('kernel_size'))}"]
    padding = p.get("padding", 0)
    if isinstance(padding, str) or not _all(padding, 0):
        parts.append(f"padding {_dims(padding)}")
    parts += [f"{key.replace('_', ' ')} {_dims(p[key])}" for key, default in _DEFAULTS.items()
              if key in p and not _all(p[key], default)]
    if p.get("batch", 1) != 1:
        parts.append(f"batch {p['batch']}")
    if p.get("bias"):
        parts.append("bias")
    if p.get("layout") == "channels_last":
        parts.append("channels_last")
    parts.append(str(p.get("dtype", "float32")))
    if p.get("epilogue"):
        parts.append("then " + ", ".join(p["epilogue"]))
    if p.get("quant"):
        parts.append("quant " + ", ".join(f"{k}={v}" for k, v in p["quant"].items() if v is not None))
    if p.get("expect") == "invalid":
        parts.append("an invalid configuration")
    return ", ".join(parts)


def first_line(text: str, limit: int = 120) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def record_title(rec: Record) -> str:
    """backend version: op and the parameters that matter, what it judged, the status and its size."""
    what = "" if rec.output == "out" else f" ({rec.output})"
    status = rec.status + (f" ({rec.diagnosis})" if rec.diagnosis else "")
    if rec.status == "mismatch" and rec.bound_ratio is not None:
        size = f", {rec.bound_ratio:.3g} x the error bound"
    elif rec.message and rec.status != "pass":
        size = f": {first_line(rec.message)}"
    else:
        size = ""
    return f"{rec.backend} {rec.backend_version}: {case_summary(rec.params)}{what} gives {status}{size}"


def expected_vs_actual(rec: Record) -> str:
    """A paragraph or two: what the float64 reference says, what the framework did, where the errors sit."""
    expected = f"Expected: {SEMANTICS}; each element within its rounding bound (derived from |x| * |w| and the dtype)."
    if rec.params.get("expect") == "invalid":
        expected = "Expected: the call raises: the configuration is not a valid convolution."
    elif rec.params.get("quant"):
        expected = ("Expected: ONNX QLinearConv semantics, exact integer accumulation, requantized with "
                    "round-half-to-even and saturation; at most one unit of y off.")
    lines = [expected, ""]
    if rec.status == "pass":
        lines.append("Actual on this host: within the bound (passes)"
                     + (f", max |error| {rec.max_abs_err:.3g}" if rec.max_abs_err is not None else "") + ".")
    elif rec.status == "mismatch":
        lines.append(f"Actual: max |error| {_g(rec.max_abs_err)} (relative {_g(rec.rel_err)}), "
                     f"{_g(rec.bound_ratio)} x the bound.")
        where = rec.where or {}
        if where:
            lines.append(f"{where.get('bad')} of {where.get('total')} elements beyond the bound ({where.get('region')}); "
                         f"the worst at index {tuple(where.get('worst_index', []))}.")
    else:
        lines.append(f"Actual: {rec.status}: {rec.message or 'no message'}")
    if rec.diagnosis:
        lines += ["", f"The errors match one known bug class exactly: {rec.diagnosis}."]
    return "\n".join(lines)


def _g(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3g}"
