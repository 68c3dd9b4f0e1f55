"""Reproducer template for paddle-inference (see reports/repro/script.py for the script around it).

What backends/paddle/inference.py does, written out: a paddle.nn.Layer holding the case's weight and
bias as parameters and the epilogue's per-channel constants as buffers, whose forward is the `paddle`
backend's functional call (PaddleBackend.call_line) then the epilogue in paddle ops
(backends/paddle/epilogue.py); paddle.jit.save writes it into a temporary directory and a
paddle.inference predictor runs it on the CPU with IR optimization on and oneDNN at Paddle's default.
forward() takes x and up to four residuals positionally (residual0, ..., residual3: to_static refuses
*args), the i-th bound to the epilogue's i-th residual. The recorded translation must be the one the
adapter writes now (bar whether the model came from its cache and the oneDNN state it read).
"""

from __future__ import annotations

import textwrap

from backends.paddle.eager import PaddleBackend
from backends.paddle.inference import CPU_DTYPES, MAX_RESIDUALS, PaddleInferenceBackend, input_specs
from harness.execution.records import Record
from harness.model.case import Case
from harness.numerics.inputs import make_inputs
from reports.repro.epilogue import residual_names, vector_names
from reports.repro.registry import ReproUnavailable, register, stale

VARIABLE = ("paddle.jit.save(", "config.disable_gpu()")  # lines whose comment says how the run went


@register("paddle-inference")
def paddle_inference_template(rec: Record, case: Case) -> str:
    """The layer, paddle.jit.save and the predictor (CPU, IR optimization on, oneDNN at its default)."""
    if case.dtype not in CPU_DTYPES or case.epilogue.count("residual") > MAX_RESIDUALS:
        raise ReproUnavailable(f"{rec.backend} does not run this case (a {case.dtype} model, or more than "
                               f"{MAX_RESIDUALS} residual inputs)")
    backend = PaddleInferenceBackend()
    backend.pdb = PaddleBackend()  # its translate() and call_line() are pure: no paddle import here
    now = backend.translation(case, make_inputs(case), "", False).splitlines()
    if rec.translation.strip() and _normal(now) != _normal(rec.translation.splitlines()):
        raise stale(rec)
    forward = [ln.removeprefix("        ") for ln in now[now.index(next(ln for ln in now if ln.startswith("    def forward("))) + 1:]
               if ln.startswith("        ")]
    res = residual_names(case)
    moved = [(n, f"residual{j}") for j, n in enumerate(res) if n != f"residual{j}"]  # the i-th input is the i-th residual
    bind = [", ".join(n for n, _ in moved) + " = " + ", ".join(p for _, p in moved)] if moved else []
    params = ", ".join(f"residual{j}=None" for j in range(MAX_RESIDUALS))
    specs = ", ".join(f"InputSpec({shape}, DTYPE, name={n!r})" for n, shape in input_specs(case))
    arrays = ", ".join(["'x': x", *(f"{n!r}: NAMED[{n!r}]" for n in res)])
    buffers = ("\n            for name in " + repr(vector_names(case)) + ":  # the epilogue's per-channel constants"
               "\n                self.register_buffer(name, paddle.to_tensor(NAMED[name].astype(DTYPE)))") if vector_names(case) else ""
    bias = ("\n            self.b = self.create_parameter(list(b.shape), dtype=DTYPE, default_initializer=Assign(b.astype(DTYPE)))"
            if case.bias else "")
    return f'''import os
import tempfile

import paddle
import paddle.nn.functional as F
from paddle.nn.initializer import Assign
from paddle.static import InputSpec


def run_framework(x, w, b):
    """paddle.jit.save, then a paddle.inference predictor (CPU, IR optimization on, oneDNN at its default)."""
    paddle.set_device("cpu")

    class Net(paddle.nn.Layer):
        """convdiff's paddle-inference layer: w{", b" if case.bias else ""} parameters, the epilogue's constants buffers."""

        def __init__(self):
            super().__init__()
            self.w = self.create_parameter(list(w.shape), dtype=DTYPE, default_initializer=Assign(w.astype(DTYPE))){bias}{buffers}

        def forward(self, x, {params}):
{textwrap.indent(chr(10).join([*bind, *forward]), " " * 12)}

    net = Net()
    net.eval()
    arrays = {{{arrays}}}
    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(net, os.path.join(tmp, "model"), input_spec=[{specs}])
        config = paddle.inference.Config(os.path.join(tmp, "model.json"), os.path.join(tmp, "model.pdiparams"))
        config.disable_gpu()
        config.switch_ir_optim(True)
        config.disable_glog_info()
        print("paddle.inference oneDNN:", config.mkldnn_enabled())
        predictor = paddle.inference.create_predictor(config)
        for name in predictor.get_input_names():
            predictor.get_input_handle(name).copy_from_cpu(np.ascontiguousarray(arrays[name].astype(DTYPE)))
        predictor.run()
        y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
    return y.astype(np.float64), str(y.dtype)
'''


def _normal(lines: list[str]) -> list[str]:
    """The translation without what varies from run to run: the cache line's and the oneDNN line's comments."""
    return [ln.split("  # ", 1)[0] if ln.startswith(VARIABLE) else ln for ln in lines]
