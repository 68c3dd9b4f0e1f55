"""TVM gradients (`tvm`): Relax's own reverse-mode AD, `relax.transform.Gradient`.

The forward is the `tvm` backend's direct Relax function; the differentiation target
is the scalar `sum(y * dy)` (Gradient differentiates scalars only), whose adjoint in y
is exactly dy, so `main_adjoint` returns J^T dy for x, w (and b). Relax registers a
gradient (the op attribute `FPrimalGradient`) for `relax.nn.conv2d` in NCHW/OIHW only;
every op without one, and channels_last layouts, are `unsupported` with that reason,
read from TVM itself. The compiled adjoint module is cached like the forward one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Output, Rejected, Unsupported, first_line
from backends.tvm.plan import data_layout, direct_plan, kernel_layout
from harness.model.case import Case
from harness.numerics.inputs import Inputs

GRADIENT_LAYOUTS = {"NCHW": "OIHW"}  # what relax's conv2d gradient asserts (_op_gradient.conv2d_grad)


def unsupported_reason(backend: Any, case: Case) -> str | None:
    """Why Relax cannot differentiate this case, asked of TVM (None when it can)."""
    fn_name = direct_plan(case)[0]
    op = backend.tvm.ir.Op.get(f"relax.nn.{fn_name}")
    if op.get_attr("FPrimalGradient") is None:
        return f"TVM {backend.tvm.__version__} registers no gradient for relax.nn.{fn_name} " \
               "(relax.transform.Gradient cannot differentiate it)"
    dl, kl = data_layout(case), kernel_layout(case)
    if GRADIENT_LAYOUTS.get(dl) != kl:
        return f"relax.nn.{fn_name}'s registered gradient takes NCHW/OIHW only (this case is {dl}/{kl})"
    return None


def relax_gradients(backend: Any, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
    reason = unsupported_reason(backend, case)
    if reason:
        raise Unsupported(reason)
    relax = backend.relax
    fn_name, kw, w_shape, bshape, lines, notes = direct_plan(case)

    def make_mod() -> Any:
        def tensor(shape: tuple[int, ...]) -> Any:
            return relax.TensorType(shape=shape, dtype=case.dtype)

        x, w = relax.Var("x", tensor(case.input_shape)), relax.Var("w", tensor(w_shape))
        b = relax.Var("b", tensor((case.out_channels,))) if case.bias else None
        g = relax.Var("dy", tensor(case.output_shape))
        params = [x, w, *([b] if b is not None else []), g]
        bb = relax.BlockBuilder()
        with bb.function("main", params):
            with bb.dataflow():
                y = bb.emit(getattr(relax.op.nn, fn_name)(x, w, **kw))
                if b is not None:
                    y = bb.emit(relax.op.add(y, relax.op.reshape(b, bshape)))
                loss = bb.emit_output(relax.op.sum(relax.op.multiply(y, g)))
            bb.emit_func_output(loss)
        mod = bb.get()
        return relax.transform.Gradient("main", require_grads=params[:-1])(mod)

    key = backend.key(case, device, data_layout=data_layout(case), kernel_layout=kernel_layout(case),
                      gradients="sum(y*dy)")
    vm, how = backend.compile_cached(key, device, make_mod)
    dev = backend.dev(device)
    args = [inputs.x, inputs.w, *([inputs.b] if inputs.b is not None else []), dy]
    try:
        _, grads = vm["main_adjoint"](*(backend.tvm.runtime.tensor(a, dev) for a in args))
        arrays = [g.numpy() for g in grads]
    except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
        raise Rejected(first_line(exc)) from None
    names = ["grad_input", "grad_weight", "grad_bias"][:len(arrays)]
    what = "x, w" + (", b" if inputs.b is not None else "")
    lines = [*lines, "loss = relax.op.sum(relax.op.multiply(y, dy))  # scalar target: its adjoint in y is dy",
             f"mod = relax.transform.Gradient('main', require_grads=[{what}])(mod)", how,
             f"loss, ({what.replace('x', 'gx').replace('w', 'gw').replace('b', 'gb')}) = "
             f"relax.VirtualMachine(exe, dev)['main_adjoint']({what}, dy)"]
    return {n: Output(a, str(a.dtype), "\n".join(lines), notes=list(notes)) for n, a in zip(names, arrays)}
