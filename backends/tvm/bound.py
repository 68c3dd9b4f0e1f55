"""TVM with the model's constants bound (`tvm-bound`): the deployed form of the `tvm` function.

The Relax function is the `tvm` backend's (backends/tvm/direct.py, backends/tvm/epilogue.py),
then `relax.transform.BindParams` turns the weight, the bias and every epilogue constant into
relax constants, as an importer does with a real model's initializers; x and each residual stay
inputs. `tvm.compile`'s default pipeline (for llvm: LegalizeOps, AnnotateTIROpPattern,
FoldConstant, FuseOps, FuseTIR, ...) then sees constants it may fold and fuse into the conv's
kernel: that folding and fusion is what this backend puts under test, against `tvm`, which
passes the same values at run time. What it does (TVM 0.27, llvm, optimized IR printed once):
FoldConstant evaluates the constant-only subexpressions (the reshapes of the bound (C,) vectors to
(1, C, 1, ...)); it does not fold a scale or batch_norm into the weights (Relax's default pipeline
has no FoldScaleAxis); FuseOps/FuseTIR fuse the conv with the bias add and the leading
per-channel ops into one kernel (e.g. fused_conv2d_transpose_add_multiply_add), and batch_norm
with what follows it into another.

Compiled modules are cached as `tvm`'s are, keyed additionally by a digest of the bound arrays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from backends.base import Output, Unsupported
from backends.tvm import epilogue as tvm_epilogue
from backends.tvm.cache import array_digest
from backends.tvm.direct import TvmBackend
from harness.model.case import Case
from harness.numerics.inputs import Inputs

RUNTIME_INPUTS = ("x",)  # besides the residuals: everything else is bound


class TvmBoundBackend(TvmBackend):
    """Direct Relax ops with w, b and the epilogue constants bound as constants (BindParams)."""

    name = "tvm-bound"
    capabilities = dataclasses.replace(TvmBackend.capabilities, gradients="none")

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        raise Unsupported("tvm-bound binds the weights as constants, so there is nothing to differentiate them as; "
                          "the `tvm` backend differentiates the same function with relax.transform.Gradient")

    @staticmethod
    def split(case: Case, args: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(bound, runtime): `main`'s parameters split into the constants bound and the inputs left."""
        runtime = set(RUNTIME_INPUTS) | {p.name for p in tvm_epilogue.parameters(case) if p.residual}
        return ({k: v for k, v in args.items() if k not in runtime}, {k: v for k, v in args.items() if k in runtime})

    def bound_factory(self, make_mod: Callable[[], Any], bound: dict[str, np.ndarray]) -> Callable[[], Any]:
        """The `tvm` module factory with `bound` bound as relax constants into `main`."""
        relax, tvm = self.relax, self.tvm

        def make_bound() -> Any:
            consts = {k: tvm.runtime.tensor(v) for k, v in bound.items()}
            return relax.transform.BindParams("main", consts)(make_mod())

        return make_bound

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        make_mod, lines, notes = self.build(case, device)
        bound, runtime = self.split(case, self.arguments(case, inputs))
        key = self.key(case, device, **self.key_parts(case, inputs), bound=array_digest(*bound.values()),
                       bound_names=list(bound))
        vm, how = self.compile_cached(key, device, self.bound_factory(make_mod, bound))
        arr, dtype = self.invoke(vm, list(runtime.values()), device)
        names = ", ".join(f"{k!r}: {k}" for k in bound)
        lines += [f"mod = relax.transform.BindParams('main', {{{names}}})(mod)  # relax constants: "
                  "the default pipeline's FoldConstant and FuseOps see them", how,
                  f"y = relax.VirtualMachine(exe, dev)['main']({', '.join(runtime)})"]
        return Output(arr, dtype, "\n".join(lines), notes=notes)
