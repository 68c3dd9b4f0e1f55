"""`mutant:<bug>` for the metamorphic relations: each breaks exactly one relation and no other.

Test doubles, not backends. The base is the float64 oracle rounded once to the case dtype (harness/numerics/
oracle.py): a correctly rounded result, hence the same bits whatever the batch, the layout, the thread count,
the run or a power-of-two scaling, and subnormals kept. Each bug changes that base under one condition only:

* batch_dependent_kernel (batch): an odd batch of 3 or more runs another kernel, which rounds x and w to
  bfloat16 first (beyond the bound);
* thread_dependent_sum (threads): on one thread the sum runs in another order, in float32 (within the bound);
* layout_dependent_path (layout): channels-last runs another kernel, which rounds x and w to bfloat16 first;
* kernel_variant_differs (layout, its kernel variants): two declared kernel variants, `bfloat16-kernel` (x and
  w rounded to bfloat16 first: beyond the bound) and `float32-sum` (the sum in float32: within it), the latter
  set through an environment variable, as TF_ENABLE_ONEDNN_OPTS is; the default kernel is the base;
* flush_to_zero (subnormal): subnormal inputs are read as zero and subnormal outputs written as zero (DAZ and
  FTZ);
* transpose_not_adjoint (adjoint): the transposed convolution uses its kernel unflipped, so it is not the
  adjoint of the forward convolution;
* repeat_differs (determinism): the same input twice in a row takes a cached path that sums in float32
  (within the bound), as a stale prepacked or autotuned kernel would.

Every other relation sees the base, bitwise (adjoint and the subnormal relation's scaled probe, which are
not exact for any target: within their bounds).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

import ml_dtypes
import numpy as np

from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Unsupported
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.epilogue import apply_epilogue
from harness.numerics.inputs import NUMPY_DTYPES, Inputs
from harness.numerics.oracle import convolve, reference
from harness.numerics.relations import is_subnormal

RELATION_MUTANTS = {
    "batch_dependent_kernel": "batch",
    "thread_dependent_sum": "threads",
    "layout_dependent_path": "layout",
    "kernel_variant_differs": "layout",
    "flush_to_zero": "subnormal",
    "transpose_not_adjoint": "adjoint",
    "repeat_differs": "determinism",
}


VARIANT_ENV = "CONVDIFF_MUTANT_KERNEL"  # kernel_variant_differs: the env its float32-sum variant is started with


def _bf16(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(ml_dtypes.bfloat16).astype(np.float64)


def _flush(a: np.ndarray | None, dtype: str) -> np.ndarray | None:
    if a is None:
        return None
    a64 = np.asarray(a, dtype=np.float64)
    return np.where(is_subnormal(a64, dtype), 0.0, a64)


class RelationMutant(Backend):
    framework = "numpy"
    devices = ("cpu",)
    test_only = True
    capabilities = Capabilities(devices=("cpu",), dtypes=("float32", "float64", "float16", "bfloat16"))
    epilogue_ops = EPILOGUE_OPS  # the oracle applies the epilogue

    def __init__(self, bug: str) -> None:
        if bug not in RELATION_MUTANTS:
            raise ValueError(f"unknown relation mutant '{bug}' (known: {', '.join(RELATION_MUTANTS)})")
        self.bug = bug
        self.name = f"mutant:{bug}"
        self.threads: int | None = None
        self.variant = ""  # kernel_variant_differs: the kernel variant this worker runs ("": the default)
        self.last: str = ""  # repeat_differs: the digest of the previous call's case and inputs

    def set_threads(self, n: int) -> None:
        self.threads = n

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        if self.bug != "kernel_variant_differs":
            return super().kernel_variants(host)
        return (KernelVariant("bfloat16-kernel", "x and w rounded to bfloat16 first"),
                KernelVariant("float32-sum", "the sum in float32", ((VARIANT_ENV, "float32-sum"),)))

    def use_kernel_variant(self, name: str) -> None:
        if self.bug != "kernel_variant_differs" or name not in ("bfloat16-kernel", "float32-sum"):
            super().use_kernel_variant(name)
        if name == "float32-sum" and os.environ.get(VARIANT_ENV) != name:
            raise Unsupported(f"{VARIANT_ENV} is not {name} in this worker")
        self.variant = name

    def thread_count(self) -> int | None:
        return self.threads

    def version(self) -> str:
        return np.__version__

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        x, w, b = (None if a is None else np.asarray(a, dtype=np.float64) for a in (inputs.x, inputs.w, inputs.b))
        assert x is not None and w is not None
        how = "the float64 oracle rounded once to the case dtype"
        if self.bug == "batch_dependent_kernel" and case.batch >= 3 and case.batch % 2:
            x, w, how = _bf16(x), _bf16(w), f"batch {case.batch}: x and w rounded to bfloat16 first"
        if self.bug == "layout_dependent_path" and case.channels_last:
            x, w, how = _bf16(x), _bf16(w), "channels_last: x and w rounded to bfloat16 first"
        if self.variant == "bfloat16-kernel":
            x, w, how = _bf16(x), _bf16(w), "kernel variant: x and w rounded to bfloat16 first"
        if self.bug == "flush_to_zero":
            x, w, b = _flush(x, case.dtype), _flush(w, case.dtype), _flush(b, case.dtype)
            how = "subnormal inputs and outputs flushed to zero"
        if self.bug == "transpose_not_adjoint" and case.transpose:
            w, how = np.ascontiguousarray(np.flip(w, axis=tuple(range(2, w.ndim)))), "transposed conv's kernel unflipped"
        float32_sum = (self.bug == "thread_dependent_sum" and self.threads == 1) or (
            self.bug == "repeat_differs" and self._repeated(case, inputs)) or self.variant == "float32-sum"
        if float32_sum and case.dtype in ("float32", "float64"):
            how = "the sum in float32, another order"
            out = self._float32_sum(case, x, w, b, inputs)
        else:
            out = reference(case, x, w, b, inputs.epilogue)[0]
        out = np.asarray(out).astype(NUMPY_DTYPES[case.dtype])
        if self.bug == "flush_to_zero":
            out = np.where(is_subnormal(out, case.dtype), 0, out).astype(NUMPY_DTYPES[case.dtype])
        return Output(out, case.dtype, f"# mutant:{self.bug}: {how}")

    def _repeated(self, case: Case, inputs: Inputs) -> bool:
        """Whether this call's case and inputs are the previous call's."""
        h = hashlib.sha256(repr(dataclasses.replace(case, id="", file="", line=0)).encode())
        for a in (inputs.x, inputs.w, inputs.b):
            h.update(b"-" if a is None else np.ascontiguousarray(a).tobytes())
        repeated, self.last = h.hexdigest() == self.last, h.hexdigest()
        return repeated

    @staticmethod
    def _float32_sum(case: Case, x: np.ndarray, w: np.ndarray, b: np.ndarray | None, inputs: Inputs) -> np.ndarray:
        """The convolution summed in float32 (NumPy's einsum on float32 operands), its epilogue in float64."""
        x32 = (np.moveaxis(x, -1, 1) if case.channels_last else x).astype(np.float32)
        y = convolve(case, np.ascontiguousarray(x32), w.astype(np.float32), None if b is None else b.astype(np.float32))
        y = np.asarray(y, dtype=np.float64)
        if case.channels_last:
            y = np.ascontiguousarray(np.moveaxis(y, 1, -1))
        return apply_epilogue(case, y, inputs.epilogue)[0] if case.epilogue else y
