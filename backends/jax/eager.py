"""JAX/XLA: `jax.lax.conv_general_dilated` for conv, `jax.lax.conv_transpose` for transposed conv.

Native: explicit (before, after) pads, 'SAME'/'VALID', rhs_dilation, feature_group_count, and
dimension_numbers for both layouts (NC*/N*C data, the canonical OI* weight passed untouched).
Transposed conv goes through `jax.lax.conv_transpose(..., transpose_kernel=True,
use_consistent_padding=True)`: the kernel read as the forward conv's (C_in, C_out, *k) and
flipped, padding read as the forward conv's (PyTorch's meaning). Exact identities, recorded:
- output_padding: lax has none; it is the forward padding after each dim reduced by it
  (the transposed conv then pads `d*(k-1) - pa + output_padding` after, the same output);
- grouped transposes: conv_transpose has no feature_group_count, so the call it makes itself,
  conv_general_dilated with lhs_dilation=stride and the flipped kernel, with
  feature_group_count=groups and the kernel regrouped to (C_out, C_in/g, *k);
- VALID transposes whose dilated kernel is shorter than the stride: JAX's 'VALID' follows
  Keras (`L*s + max(ke - s, 0)`), the canonical VALID is the full output: zero pads instead.
No precision override: XLA's default (jax_default_matmul_precision) is part of what is tested.
float64 needs jax_enable_x64, switched on in the worker only.
An epilogue runs eagerly after the conv and bias, one jax op dispatched at a time
(backends/jax/epilogue.py; batch norm written out: core JAX has no inference batch-norm op).
"""

from __future__ import annotations

import collections
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from backends.artifacts import cache_base
from backends.base import Backend, Capabilities, HostFact, Output, Rejected, Unsupported, first_line
from backends.jax import epilogue as jax_epilogue
from backends.pads import stated_pads
from harness.model.case import Case
from harness.numerics.inputs import NUMPY_DTYPES, Inputs

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
Pairs = tuple[tuple[int, int], ...]


def dimension_numbers(case: Case) -> tuple[str, str, str]:
    """(lhs, rhs, out) specs: the case layout for data, the canonical OI* weight."""
    sp = SPATIAL[case.rank]
    data = f"N{sp}C" if case.channels_last else f"NC{sp}"
    return data, f"OI{sp}", data


def _explicit(case: Case) -> tuple[Pairs, tuple[int, ...]]:
    """Explicit pads and tail extension; for an invalid case, what the user wrote."""
    if case.geometry is not None:
        return case.geometry.pads, case.geometry.extend
    ext = case.output_padding if case.transpose and case.output_padding else (0,) * case.rank
    return tuple(stated_pads(case)), ext


def _dilated_kernel(case: Case) -> list[int]:
    return [d * (k - 1) + 1 for k, d in zip(case.kernel_size, case.dilation)]


def persistent_compilation_cache(jax: Any) -> None:
    """XLA executables on disk under $CONVDIFF_CACHE/jax (keyed by jax itself: the computation, jax and
    jaxlib versions, XLA flags, device kind), every one of them however fast it compiled: a warm run
    loads what a cold one compiled (measured: 145 against 300 ms per eager case, issue 26)."""
    base = cache_base()
    if base is None:
        return
    jax.config.update("jax_compilation_cache_dir", str((base / "jax").resolve()))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


@dataclass(frozen=True)
class LaxCall:
    """Every decision JaxBackend makes for one case, without arrays; `lines()` is the call as code."""

    fn: str                                  # attribute of jax.lax
    kwargs: dict[str, Any]                   # keyword arguments after (x, w), python literals
    regroup: tuple[int, int, int] | None = None  # grouped transpose: (groups, C_in/g, C_out/g)
    channel_axis: int = 1
    rank: int = 2
    notes: list[str] = field(default_factory=list)

    def weight_lines(self) -> list[str]:
        if self.regroup is None:
            return []
        g, cig, cog = self.regroup
        axes = tuple(range(2, 2 + self.rank))
        return [f"w = w.reshape({g}, {cig}, {cog}, *w.shape[2:])  # (g, C_in/g, C_out/g, *k)",
                f"w = jnp.swapaxes(w, 1, 2).reshape({g * cog}, {cig}, *w.shape[3:])  # (C_out, C_in/g, *k)",
                f"w = jnp.flip(w, axis={axes})"]

    def bias_line(self) -> str:
        if self.channel_axis == self.rank + 1:
            return "y = y + b"
        return f"y = y + b[:, {', '.join(['None'] * self.rank)}]"

    def lines(self, bias: bool) -> list[str]:
        """The calls as a user would write them (x, w, b, jnp, jax in scope; result in y)."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return [*self.weight_lines(), f"y = jax.lax.{self.fn}(x, w, {args})",
                *([self.bias_line()] if bias else [])]


def lax_call(case: Case) -> LaxCall:
    """JaxBackend's translation of a case into jax.lax calls."""
    dn = dimension_numbers(case)
    stride, dil = tuple(case.stride), tuple(case.dilation)
    pads, ext = _explicit(case)
    notes: list[str] = []
    common = {"channel_axis": case.rank + 1 if case.channels_last else 1, "rank": case.rank}
    padding: Any
    if not case.transpose:
        padding = case.padding.upper() if isinstance(case.padding, str) else pads
        return LaxCall("conv_general_dilated", {
            "window_strides": stride, "padding": padding, "rhs_dilation": dil,
            "dimension_numbers": dn, "feature_group_count": case.groups}, notes=notes, **common)
    ke = _dilated_kernel(case)
    if case.groups != 1:  # below 1 (an invalid case): the same call, the weight as given, for XLA to judge
        notes.append("grouped transpose: jax.lax.conv_transpose has no feature_group_count; its own "
                     "lowering (conv_general_dilated, lhs_dilation=stride, flipped kernel) with "
                     "feature_group_count=groups and the kernel regrouped to (C_out, C_in/g, *k)")
        lax_pads = tuple((k - 1 - pb, k - 1 - pa + e) for k, (pb, pa), e in zip(ke, pads, ext))
        g = case.groups
        regroup = (g, case.in_channels // g, case.out_channels // g) if g >= 1 else None
        return LaxCall("conv_general_dilated", {
            "window_strides": (1,) * case.rank, "padding": lax_pads, "lhs_dilation": stride,
            "rhs_dilation": dil, "dimension_numbers": dn, "feature_group_count": g},
            regroup=regroup, notes=notes, **common)
    if case.padding == "same" or (case.padding == "valid" and all(k >= s for k, s in zip(ke, stride))):
        padding = case.padding.upper()
    else:
        if case.padding == "valid":
            notes.append("VALID with a dilated kernel shorter than the stride: JAX's 'VALID' is Keras's "
                         "(L*s + max(ke - s, 0)), the canonical one the full output: explicit zero padding")
        padding = tuple((pb, pa - e) for (pb, pa), e in zip(pads, ext))
        if any(ext):
            notes.append("output_padding: lax has none; the forward padding after each dim is reduced by "
                         "it (conv_transpose then pads d*(k-1) - after + output_padding at the end)")
    return LaxCall("conv_transpose", {
        "strides": stride, "padding": padding, "rhs_dilation": dil, "dimension_numbers": dn,
        "transpose_kernel": True, "use_consistent_padding": True}, notes=notes, **common)


# --- host facts: what XLA decided, read from what it compiled and started ---------------
CONV_LINE = re.compile(r"=\s*\(?(\w+)\[.*?\s(convolution|custom-call)\(")  # cuDNN returns a tuple
TARGET = re.compile(r'custom_call_target="([^"]+)"')


def conv_decision(hlo: str) -> tuple[str, str]:
    """(element type, implementation) of the convolution in optimized HLO text."""
    for line in hlo.splitlines():
        m = CONV_LINE.search(line)
        if m and m.group(2) == "convolution":
            return m.group(1), "hlo-convolution"
        target = TARGET.search(line)
        if m and target and "conv" in target.group(1).lower():  # a library call (oneDNN, cuDNN)
            return m.group(1), target.group(1)
    return "none", "none"


def xla_pool_threads() -> int:
    """Threads of XLA's intra-op Eigen pool in this process (named ...XLAEigen on Linux)."""
    count: collections.Counter[str] = collections.Counter()
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as fh:
                count[fh.read().strip()] += 1
    except OSError:
        return -1
    return sum(n for name, n in count.items() if "XLAEigen" in name)


class JaxBackend(Backend):
    builds_per_case = True  # eager, but XLA compiles every primitive for each new shape: 630 ms a case cold
    name = "jax"
    framework = "jax"
    epilogue_ops = jax_epilogue.OPS
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same", "valid"),
        padding_identities=("VALID transpose with dilated kernel < stride: explicit zero pads",),
        output_padding="via padding (conv_transpose use_consistent_padding: after-pad reduced by it)",
        groups="conv (feature_group_count); transpose: conv_general_dilated with lhs_dilation",
        gradients="jax.vjp",
    )

    def supports(self, case: Case, device: str) -> str | None:
        op = case.output_padding if case.transpose and case.output_padding else (0,) * case.rank
        if any(o >= max(s, d) for o, s, d in zip(op, case.stride, case.dilation)):
            return ("output_padding >= max(stride, dilation) cannot be posed to JAX: lax.conv_transpose has no "
                    "output_padding (it is folded into the padding, where any value is a valid convolution)")
        return None

    def set_threads(self, n: int) -> None:
        """XLA's CPU client sizes its intra-op pool from the cores it may use; its flags can only make the
        convolution single-threaded (Eigen's pool off), read when the client starts (after setup)."""
        if n != 1:
            raise Unsupported(f"{self.name}: XLA's CPU thread pool follows the cores; only 1 thread can be set "
                              "(XLA_FLAGS --xla_cpu_multi_thread_eigen=false)")
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()

    def thread_count(self) -> int | None:
        if "--xla_cpu_multi_thread_eigen=false" in os.environ.get("XLA_FLAGS", ""):
            return 1
        return xla_pool_threads() or None  # counted once host_facts ran a convolution

    def setup(self, device: str) -> None:
        import jax

        jax.config.update("jax_enable_x64", True)  # float64 cases; this worker only
        self.jax = jax
        persistent_compilation_cache(jax)

    def device_reason(self, device: str) -> str | None:
        if device == "cpu":
            return None
        if device == "cuda":
            try:
                self.jax.devices("cuda")
            except RuntimeError as exc:
                return f"no CUDA device visible to JAX ({first_line(exc)}); install jax[cuda12] on a GPU host"
            return None
        return f"unknown device {device}"

    def _device(self, device: str) -> Any:
        return self.jax.devices("cuda" if device == "cuda" else "cpu")[0]

    def _precision(self) -> str:
        return str(self.jax.config.jax_default_matmul_precision)

    def fingerprint(self, device: str) -> dict[str, str]:
        import jaxlib

        dev = self._device(device)
        return {"version": self.jax.__version__, "jaxlib": jaxlib.__version__, "platform": dev.platform,
                "platform_version": str(dev.client.platform_version), "device_kind": str(dev.device_kind),
                "default_matmul_precision": self._precision(),
                "x64": str(bool(self.jax.config.jax_enable_x64))}

    def host_facts(self, device: str) -> dict[str, HostFact]:
        facts: dict[str, HostFact] = {}
        for dtype in ("float32", "float16", "bfloat16"):
            elem, impl = self._probe_conv(dtype, device)
            short = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[dtype]
            facts[f"jax_{short}_conv_dtype"] = elem
            if dtype == "float32":
                facts["jax_conv_impl"] = impl
        if device == "cpu":
            facts["jax_threads"] = xla_pool_threads()
        return facts

    def _probe_conv(self, dtype: str, device: str) -> tuple[str, str]:
        """Compile a tiny 2-D conv and read from XLA's optimized HLO what it convolves in and with."""
        jax = self.jax
        x = jax.device_put(np.ones((1, 2, 5, 5), dtype=NUMPY_DTYPES[dtype]), self._device(device))
        w = jax.device_put(np.ones((2, 2, 3, 3), dtype=NUMPY_DTYPES[dtype]), self._device(device))
        fn = jax.jit(lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME"))
        try:
            compiled = fn.lower(x, w).compile()
            fn(x, w).block_until_ready()  # starts XLA's thread pool, so jax_threads reads it
        except Exception as exc:  # noqa: BLE001 - a refusal is the answer
            return f"rejected ({first_line(exc)[:60]})", "none"
        return conv_decision(compiled.as_text())

    # --- the call -----------------------------------------------------------------------
    def forward(self, case: Case, plan: LaxCall, x: Any, w: Any, b: Any) -> Any:
        """y from device arrays (x in the case layout, w canonical); framework errors propagate."""
        jax = self.jax
        jnp = jax.numpy
        if plan.regroup is not None:
            g, cig, cog = plan.regroup
            w = w.reshape(g, cig, cog, *w.shape[2:])
            w = jnp.swapaxes(w, 1, 2).reshape(g * cog, cig, *w.shape[3:])
            w = jnp.flip(w, axis=tuple(range(2, 2 + case.rank)))
        y = getattr(jax.lax, plan.fn)(x, w, **plan.kwargs)
        if b is not None:
            shape = [1] * (case.rank + 2)
            shape[plan.channel_axis] = -1
            y = y + b.reshape(shape)
        return y

    def _put(self, a: np.ndarray | None, device: str) -> Any:
        return None if a is None else self.jax.device_put(a, self._device(device))

    def _tf32(self, case: Case, device: str) -> bool:
        """On CUDA XLA's default precision lets float32 convolutions use TF32 (no override is set)."""
        return device == "cuda" and case.dtype == "float32" and self._precision() not in ("highest", "float32")

    def epilogue(self, case: Case, y: Any, inputs: Inputs, device: str) -> Any:
        """y after the case's epilogue, each op dispatched eagerly on device arrays."""
        consts = {k: self._put(v, device) for k, v in jax_epilogue.constants(case, inputs.epilogue).items()}
        consts.update({k: self._put(v, device) for k, v in jax_epilogue.residuals(case, inputs.epilogue).items()})
        return jax_epilogue.apply(self.jax, case, y, consts, inputs.epilogue)

    def translation(self, case: Case, plan: LaxCall, inputs: Inputs) -> list[str]:
        """The conv, bias and epilogue as a user writes them (eagerly, op by op)."""
        if not case.epilogue:
            return plan.lines(inputs.b is not None)
        return [*jax_epilogue.scalar_lines(case, inputs.epilogue), *plan.lines(inputs.b is not None),
                *jax_epilogue.lines(case)]

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        plan = lax_call(case)
        x, w, b = (self._put(a, device) for a in (inputs.x, inputs.w, inputs.b))
        try:
            y = self.forward(case, plan, x, w, b)
            if case.epilogue:
                y = self.epilogue(case, y, inputs, device)
            arr = np.asarray(y)
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        finally:
            self.jax.clear_caches()  # cases rarely share shapes: kept executables only grow the worker (GBs)
        return Output(np.ascontiguousarray(arr), str(y.dtype), "\n".join(self.translation(case, plan, inputs)),
                      tf32=self._tf32(case, device), notes=list(plan.notes))

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        """jax.vjp of the forward call at (x, w[, b]), pulled back from dy."""
        plan = lax_call(case)
        names = ["grad_input", "grad_weight", *(["grad_bias"] if inputs.b is not None else [])]
        leaves = [self._put(a, device) for a in (inputs.x, inputs.w, inputs.b)[:len(names)]]
        try:
            _, pullback = self.jax.vjp(lambda *a: self.forward(case, plan, *a, *([None] * (3 - len(a)))), *leaves)
            grads = [np.asarray(g) for g in pullback(self._put(dy, device))]
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        finally:
            self.jax.clear_caches()
        args = ", ".join(("x", "w", "b")[:len(names)])
        body = [f"def f({args}):", *(f"    {line}" for line in plan.lines(inputs.b is not None)),
                "    return y", f"y, pullback = jax.vjp(f, {args})", "grads = pullback(dy)"]
        return {n: Output(np.ascontiguousarray(g), str(g.dtype), "\n".join(body), tf32=self._tf32(case, device),
                          notes=list(plan.notes)) for n, g in zip(names, grads)}

