"""Reproducer template for JAX (see reports/repro/script.py for the script around it).

The jax.lax lines come from backends/jax/eager.lax_call, the adapter's own pure translation,
so a script cannot drift from what the harness ran; when the record has a translation,
the generated lines must equal it (else the adapter changed since the record was made).
"""

from __future__ import annotations

import textwrap

from backends.jax import epilogue as jax_epilogue
from backends.jax.eager import lax_call
from backends.jax.jit import jit_lines
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.epilogue import assign, constants, residual_names, vector_names
from reports.repro.registry import register, require_lines


@register("jax")
def jax_template(rec: Record, case: Case) -> str:
    """jax.lax calls from lax_call, on arrays made in DTYPE exactly as the adapter made them."""
    plan = lax_call(case)
    scalars = constants(case)
    lines = [*jax_epilogue.scalar_lines(case, scalars), *plan.lines(case.bias), *jax_epilogue.lines(case)] \
        if case.epilogue else plan.lines(case.bias)
    require_lines(rec, lines)
    notes = [f"# exact identity: {n}" for n in plan.notes]
    feed = _epilogue_arrays(case, "put({}, device)", "put({}.reshape(CHANNEL), device)")
    body = textwrap.indent("\n".join([*notes, *feed, *lines]), " " * 4)
    return JAX_SETUP + f'''

def run_framework(x, w, b):
    """The calls convdiff's jax adapter made, on {rec.device} (no precision override, as convdiff)."""
    device = jax.devices("cuda" if DEVICE == "cuda" else "cpu")[0]
    x, w, b = put(x, device), put(w, device), None if b is None else put(b, device)
{body}
    return np.asarray(y.astype(jnp.float64)), str(y.dtype)
'''


@register("jax-jit")
def jax_jit_template(rec: Record, case: Case) -> str:
    """jax-jit: the conv and bias in one jax.jit, W and B closed over as NumPy arrays (HLO constants)."""
    plan = lax_call(case)
    lines = jit_lines(case, plan, case.bias, constants(case))
    require_lines(rec, lines)
    notes = [f"# exact identity: {n}" for n in plan.notes]
    feed = _epilogue_arrays(case, "put({}, device)", "np.asarray(jnp.asarray({}.reshape(CHANNEL), dtype=DTYPE))")
    body = textwrap.indent("\n".join([*notes, *feed, *lines]), " " * 4)
    return JAX_SETUP + f'''

def run_framework(x, w, b):
    """The jitted function convdiff's jax-jit adapter made, on {rec.device} (no precision override)."""
    device = jax.devices("cuda" if DEVICE == "cuda" else "cpu")[0]
    x = put(x, device)
    W = np.asarray(jnp.asarray(w, dtype=DTYPE))  # NumPy, closed over: XLA sees a constant
    B = None if b is None else np.asarray(jnp.asarray(b, dtype=DTYPE))
{body}
    return np.asarray(y.astype(jnp.float64)), str(y.dtype)
'''


def _epilogue_arrays(case: Case, residual: str, vector: str) -> list[str]:
    """The epilogue's residuals (arguments) and per-channel constants (shaped to broadcast on the channel
    axis, as jax_epilogue.constants shapes them) under the names the lines use."""
    if not case.epilogue:
        return []
    return ["# the epilogue's residuals and per-channel constants, exact in DTYPE",
            *assign(residual_names(case), residual), *assign(vector_names(case), vector)]


JAX_SETUP = '''
import jax

jax.config.update("jax_enable_x64", True)  # as convdiff's worker: float64 cases need it
import jax.numpy as jnp  # noqa: E402


def put(a, device):
    """An array in DTYPE on the device (exact: the values are DTYPE values)."""
    return jax.device_put(jnp.asarray(a, dtype=DTYPE), device)
'''
