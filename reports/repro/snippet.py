"""Draft snippets for upstream reports (`convdiff upstream ID --draft`): the code part of `<root>.py`.

A draft sets the environment the entry's host selector names (before the import), draws small integer inputs
(exact in every dtype), makes the framework call exactly as the adapter made it (the record's translation,
between a per-framework prelude that makes tensors of the NumPy arrays and a line that takes the result
back), computes the expected values with a few NumPy lines (one einsum per kernel tap), prints both and exits
1 where they differ. An invalid case expects a refusal instead. Frameworks whose translation is not plain
code (a compiled or exported model) get their whole reproducer template, marked as longer than a snippet
may be: the family's engineer trims it.
"""

from __future__ import annotations

from typing import Any

from harness.execution.records import Record
from harness.model.case import Case

# host fact (and value) -> the environment variable that makes it so, set before the framework's import
HOST_SETTINGS: dict[str, dict[Any, tuple[str, str]]] = {
    "tf_onednn": {False: ("TF_ENABLE_ONEDNN_OPTS", "0"), True: ("TF_ENABLE_ONEDNN_OPTS", "1")},
    "paddle_onednn": {True: ("FLAGS_use_mkldnn", "1")},
    "torch_cpu_capability": {"DEFAULT": ("ATEN_CPU_CAPABILITY", "default"), "AVX2": ("ATEN_CPU_CAPABILITY", "avx2")},
}
ISA_CAP = ("ONEDNN_MAX_CPU_ISA", "AVX2")  # where the entry needs a CPU without AVX-512
_TORCH_DT = {"float32": "float32", "float64": "float64", "float16": "float16", "bfloat16": "bfloat16"}

PRELUDES: dict[str, tuple[list[str], list[str], str]] = {  # backend -> (imports, tensors, back to NumPy)
    "torch": (["import torch", "import torch.nn.functional as F"],
              ["x, w = torch.from_numpy(x).to(torch.{dt}), torch.from_numpy(w).to(torch.{dt})",
               "b = torch.from_numpy(b).to(torch.{dt})"], "y = y.double().numpy()"),
    "tensorflow": (["import tensorflow as tf"], ["x, w_canonical = tf.constant(x, tf.{dt}), tf.constant(w, tf.{dt})",
                                                  "b = tf.constant(b, tf.{dt})"], "y = tf.cast(y, tf.float64).numpy()"),
    "tensorflow-keras": (["import keras", "import tensorflow as tf"],
                         ["x, w_canonical = tf.constant(x, tf.{dt}), tf.constant(w, tf.{dt})", "b = b.astype('{dt}')"],
                         "y = tf.cast(y, tf.float64).numpy()"),
    "paddle": ([], ["x, w = x.astype('{dt}'), w.astype('{dt}')", "b = b.astype('{dt}')"],
               "y = y.astype('float64').numpy()"),
    "jax": (["import jax", "import jax.numpy as jnp"], ["x, w = jnp.asarray(x, '{dt}'), jnp.asarray(w, '{dt}')",
                                                         "b = jnp.asarray(b, '{dt}')"], "y = np.asarray(y, np.float64)"),
}
PRELUDES["tensorflow-graph"] = PRELUDES["tf-xla"] = PRELUDES["tensorflow"]
PRELUDES["jax-jit"] = PRELUDES["jax"]
VERSION_OF = {"torch": "torch", "tensorflow": "tf", "tensorflow-graph": "tf", "tf-xla": "tf", "tensorflow-keras": "keras",
              "paddle": "paddle", "jax": "jax", "jax-jit": "jax"}


def settings_for(host: dict[str, Any]) -> list[tuple[str, str]]:
    """The environment variables that put a process where the entry's host selector points."""
    out: list[tuple[str, str]] = []
    for key, want in host.items():
        for value in want if isinstance(want, list) else [want]:
            if isinstance(value, dict):  # a condition (`cpu_flags: {has: ...}`), not a value a setting gives
                continue
            hit = HOST_SETTINGS.get(key, {}).get(value)
            if hit is not None and hit not in out:
                out.append(hit)
        if key == "cpu_flags" and isinstance(want, dict) and "avx512f" in str(want.get("lacks", "")):
            out.append(ISA_CAP)
    return out


def _reference(case: Case) -> list[str]:
    """NumPy lines: `expected` (float64, channels first) from xc, w, b, exact for integer inputs."""
    geo = case.geometry
    assert geo is not None
    k, s, d, g = case.kernel_size, case.stride, case.dilation, case.groups
    pads = [tuple(p) for p in geo.pads]
    tap = "[(..., *[slice(t * d, t * d + (m - 1) * s + 1, s) for t, d, m, s in zip(tap, D, {m}, S)])]"
    lines = [f"S, D, K, P = {tuple(s)}, {tuple(d)}, {tuple(k)}, {pads}  # stride, dilation, kernel, pads"]
    if case.transpose:
        full = [(n - 1) * si + di * (ki - 1) + 1 + e for n, si, di, ki, e in zip(case.input_size, s, d, k, geo.extend)]
        lines += ["def ref(x, w):  # scatter each kernel tap, then crop the pads",
                  f"    full = np.zeros((x.shape[0], w.shape[1], *{tuple(full)}))",
                  "    for tap in np.ndindex(*K):",
                  f"        full{tap.format(m='x.shape[2:]')} += np.einsum('nc...,co->no...', x, w[(..., *tap)])",
                  f"    return full[(..., *[slice(a, f - z) for (a, z), f in zip(P, {tuple(full)})])]"]
    else:
        lines += ["def ref(x, w):  # one einsum per kernel tap over the padded input",
                  "    x = np.pad(x, [(0, 0), (0, 0), *P])",
                  f"    return sum(np.einsum('nc...,oc->no...', x{tap.format(m=tuple(geo.out_size))}, w[(..., *tap)])"
                  " for tap in np.ndindex(*K))"]
    call = (f"np.concatenate([ref(a, c) for a, c in zip(np.split(xc, {g}, 1), np.split(w, {g}, 0))], 1)"
            if g > 1 else "ref(xc, w)")
    bias = f" + b.reshape(1, -1, {', '.join(['1'] * case.rank)})" if case.bias else ""
    return [*lines, f"expected = {call}{bias}"]


def draft(rec: Record, case: Case, host: dict[str, Any]) -> str:
    """The draft code part of a snippet for the record's case on its backend (see the module doc)."""
    prelude = PRELUDES.get(rec.backend)
    lines = ["import os", *[f'os.environ["{k}"] = "{v}"' for k, v in settings_for(host)], "import sys", "",
             "import numpy as np"]
    if prelude is None or case.quantized or case.epilogue or rec.output != "out" or not rec.translation.strip():
        return _whole_template(rec, lines)
    imports, tensors, back = prelude
    dt = _TORCH_DT.get(case.dtype, "float32")
    module = VERSION_OF[rec.backend]
    lines += [*imports, "", f"print('{module}', {module}.__version__)" if imports else "",
              "rng = np.random.default_rng(0)",
              f"x = rng.integers(-3, 4, {case.input_shape}).astype(np.float64)  # {case.layout}",
              f"w = rng.integers(-3, 4, {case.weight_shape}).astype(np.float64)",
              *([f"b = rng.integers(-3, 4, ({case.out_channels},)).astype(np.float64)"] if case.bias else []),
              "xc = np.moveaxis(x, -1, 1)" if case.channels_last else "xc = x"]
    code = [ln for ln in rec.translation.splitlines() if ln.strip() and not ln.startswith("# exact identity:")]
    if case.expect == "invalid":
        lines += [tensors[0].format(dt=dt), "try:", *["    " + ln for ln in code],
                  "except Exception as exc:  # the refusal an invalid configuration should get",
                  "    print('refused:', str(exc).splitlines()[0])", "    sys.exit(0)",
                  "print('returned an output of shape', tuple(y.shape), 'for an invalid configuration')", "sys.exit(1)"]
        return "\n".join(lines) + "\n"
    lines += _reference(case)
    lines += [tensors[0].format(dt=dt), *([tensors[1].format(dt=dt)] if case.bias else []), *code, back]
    if case.channels_last:
        lines.append("y = np.moveaxis(y, -1, 1)")
    exact = "np.array_equal(y, expected)" if case.dtype in ("float32", "float64") else \
        "np.allclose(y, expected, rtol=1e-2, atol=1e-2)"
    lines += ["print('expected', expected.ravel()[:8], '\\nactual  ', y.ravel()[:8])",
              f"sys.exit(0 if y.shape == expected.shape and {exact} else 1)"]
    return "\n".join(lines) + "\n"


def _whole_template(rec: Record, head: list[str]) -> str:
    """The generated reproducer, as a starting point for frameworks without a plain-code translation."""
    from reports.repro.script import script_for

    body = script_for(rec)
    note = ["# DRAFT longer than a snippet may be (20 lines): this framework's call is not plain code in the",
            "# record, so this is its whole reproducer; keep the framework call and trim the rest."]
    return "\n".join([*note, *head[:-3], body])
