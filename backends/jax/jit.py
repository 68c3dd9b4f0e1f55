"""jax-jit: the conv, its bias and its epilogue as ONE `jax.jit` function, the way a model is deployed.

The translation of the conv is JaxBackend's (backends/jax/eager.lax_call, the same jax.lax call and
exact identities) and the epilogue's is the eager backend's (backends/jax/epilogue.py); only the
execution differs: one XLA computation, so XLA may fuse the bias and the epilogue into the conv's
output loop, reorder and re-associate element-wise ops, and constant-fold. The weight, the bias and
the epilogue's constants are closed over (they become HLO constants XLA may fold, e.g. the regrouped
and flipped kernel of a grouped transpose, or 1/sqrt(var + eps)); x and each residual are arguments
(XLA may not fold them).

No precision override (XLA's default is what is tested); float64 needs jax_enable_x64, switched on in
the worker by JaxBackend.setup. Gradients: jax.vjp of the conv and bias inside one jax.jit (x, w, b and dy
are then arguments, not constants).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Capabilities, Output, Rejected, first_line
from backends.jax import epilogue as jax_epilogue
from backends.jax.eager import JaxBackend, LaxCall, lax_call
from harness.model.case import Case
from harness.numerics.inputs import Inputs


def jit_lines(case: Case, plan: LaxCall, bias: bool, scalars: tuple[dict[str, np.ndarray], ...] = ()) -> list[str]:
    """The jitted function as a user writes it (pure: reports/repro/jax.py uses it too). W, B: the
    weight and bias as NumPy arrays, closed over; x and each residual are the arguments."""
    names = list(jax_epilogue.residuals(case, scalars)) if case.epilogue else []
    args = ", ".join(["x", *names])
    body = [*plan.lines(bias), *(jax_epilogue.lines(case) if case.epilogue else [])]
    consts = jax_epilogue.scalar_lines(case, scalars) if case.epilogue else []
    wb = "w, b = jnp.asarray(W), jnp.asarray(B)" if bias else "w = jnp.asarray(W)"
    return [*consts, "# W, B and the epilogue's per-channel constants: NumPy arrays closed over (HLO constants)",
            "@jax.jit", f"def f({args}):", f"    {wb}", *(f"    {ln}" for ln in body), "    return y",
            f"y = f({args})"]


class JaxJitBackend(JaxBackend):
    name = "jax-jit"
    framework = "jax"
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric", "same", "valid"),
        padding_identities=("VALID transpose with dilated kernel < stride: explicit zero pads",),
        output_padding="via padding (conv_transpose use_consistent_padding: after-pad reduced by it)",
        groups="conv (feature_group_count); transpose: conv_general_dilated with lhs_dilation",
        gradients="jax.vjp inside one jax.jit",
    )

    def jitted(self, case: Case, plan: LaxCall, inputs: Inputs) -> Any:
        """The jitted f(x, *residuals): w, b and the epilogue constants closed over as constants."""
        jax = self.jax
        jnp = jax.numpy
        w_np, b_np = inputs.w, inputs.b
        consts_np = jax_epilogue.constants(case, inputs.epilogue) if case.epilogue else {}
        names = list(jax_epilogue.residuals(case, inputs.epilogue)) if case.epilogue else []

        def f(x: Any, *res: Any) -> Any:
            # jnp.asarray of a NumPy array inside the trace: an HLO constant, not an argument
            w = jnp.asarray(w_np)
            b = None if b_np is None else jnp.asarray(b_np)
            y = self.forward(case, plan, x, w, b)
            if case.epilogue:
                consts = {k: jnp.asarray(v) for k, v in consts_np.items()}
                consts.update(zip(names, res))
                y = jax_epilogue.apply(jax, case, y, consts, inputs.epilogue)
            return y

        return jax.jit(f)

    def translation(self, case: Case, plan: LaxCall, inputs: Inputs) -> list[str]:
        """One jitted function over the conv, bias and epilogue; w, b, constants closed over."""
        return jit_lines(case, plan, inputs.b is not None, inputs.epilogue)

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        plan = lax_call(case)
        res = jax_epilogue.residuals(case, inputs.epilogue) if case.epilogue else {}
        x = self._put(inputs.x, device)
        args = [self._put(r, device) for r in res.values()]
        try:
            with self.jax.default_device(self._device(device)):
                y = self.jitted(case, plan, inputs)(x, *args)
                arr = np.asarray(y)
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        finally:
            self.jax.clear_caches()  # one executable per case: kept ones only grow the worker
        return Output(np.ascontiguousarray(arr), str(y.dtype), "\n".join(self.translation(case, plan, inputs)),
                      tf32=self._tf32(case, device), notes=list(plan.notes))

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        """jax.vjp of the forward call, pulled back from dy, all inside one jax.jit (x, w[, b], dy arguments:
        they are what is differentiated, so none is a constant here)."""
        jax = self.jax
        plan = lax_call(case)
        names = ["grad_input", "grad_weight", *(["grad_bias"] if inputs.b is not None else [])]
        n = len(names)

        def grads(dy_: Any, *leaves: Any) -> Any:
            _, pullback = jax.vjp(lambda *a: self.forward(case, plan, *a, *([None] * (3 - len(a)))), *leaves)
            return pullback(dy_)

        leaves = [self._put(a, device) for a in (inputs.x, inputs.w, inputs.b)[:n]]
        try:
            out = [np.asarray(g) for g in jax.jit(grads)(self._put(dy, device), *leaves)]
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        finally:
            jax.clear_caches()
        args = ", ".join(("x", "w", "b")[:n])
        body = [f"def f({args}):", *(f"    {line}" for line in plan.lines(inputs.b is not None)), "    return y",
                "@jax.jit", f"def grads(dy, {args}):", f"    y, pullback = jax.vjp(f, {args})", "    return pullback(dy)",
                f"grads = grads(dy, {args})"]
        return {name: Output(np.ascontiguousarray(g), str(g.dtype), "\n".join(body), tf32=self._tf32(case, device),
                             notes=list(plan.notes)) for name, g in zip(names, out)}
