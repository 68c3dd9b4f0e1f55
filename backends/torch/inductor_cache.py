"""Let inductor's FX graph cache serve the frozen graphs whose conv weights it prepacked for oneDNN.

With `freezing` on a CPU, inductor constant-folds the parameters and turns each conv's weight into a
oneDNN-blocked (`mkldnn`) tensor, a frozen constant of the graph it then lowers. Its FX graph cache
(torch/_inductor/codecache.py) refuses every graph holding such a tensor ("mkldnn tensors unpickleable",
`CacheabilityValidator.check_tensor`), so a warm run lowered those graphs again: 42 of the smoke tier's
67, 0.4-0.5 s a case. Nothing of the tensor would be pickled, though: for a frozen parameter the cache
keys the graph by the tensor's metadata only and, on a hit, takes the value from the graph module being
compiled (`CompiledFxGraphConstantsWithGm`), the freezing passes having run again before the lookup.
The refusal is a guard for a pickling that frozen parameters never reach; what kept them out is only
that torch's metadata reads strides and storage, which an mkldnn tensor does not have.

`serve_prepacked_weights()` (the torch-inductor worker calls it before compiling) keys a *frozen*
mkldnn tensor by what an mkldnn tensor has: dtype, shape, device, layout and its buffer's size (which
tells blocked formats with padding apart), and leaves every other tensor, an mkldnn one that is not a
frozen parameter included, to torch's own rules (such a graph is still refused). Why this cannot change
a verdict: the key still covers the whole graph (every node, its arguments, the inlined constants'
values), inductor's configuration, torch's source and the process's vector ISA (the directory,
backends/torch/inductor.py); the generated code reads the prepacked weight only through the
`mkldnn._convolution_pointwise` calls it makes at run time, so the code for one graph is the code for
any graph equal to it but for the weights' values, and the run uses this case's freshly packed weight.
Measured: `tests/test_inductor_cache.py` (cold and warm records identical, warm writes nothing).
A reproducer script (what a user runs) does not patch anything; only the worker does.
"""

from __future__ import annotations

from typing import Any

_PATCHED = "_convdiff_serves_prepacked"


def serve_prepacked_weights() -> bool:
    """Patch inductor's cache-key pickler in this process; False (nothing changed) where torch's
    internals are not the ones this was written against, so the cache then refuses as before."""
    try:
        from torch._inductor import codecache
        from torch._inductor.freezing_utils import is_frozen_param
    except ImportError:
        return False
    pickler = getattr(codecache, "FxGraphCachePickler", None)
    validator = getattr(codecache, "CacheabilityValidator", None)
    if pickler is None or validator is None or not hasattr(pickler, "_reduce_tensor") \
            or not hasattr(validator, "check_tensor") or not hasattr(codecache, "_ident"):
        return False
    if getattr(pickler, _PATCHED, False):
        return True
    reduce_tensor, check_tensor = pickler._reduce_tensor, validator.check_tensor

    def frozen_mkldnn(t: Any) -> bool:
        return bool(getattr(t, "is_mkldnn", False)) and is_frozen_param(t)

    def reduce(self: Any, t: Any) -> tuple[Any, tuple[Any, ...]]:
        if not frozen_mkldnn(t):
            return reduce_tensor(self, t)
        import torch

        meta = ("frozen mkldnn", t.dtype, tuple(t.shape), t.device.type, str(t.layout),
                int(torch.ops.mkldnn._nbytes(t)), t.requires_grad)
        return (codecache._ident, (meta,))

    def check(t: Any) -> None:
        if not frozen_mkldnn(t):
            check_tensor(t)

    pickler._reduce_tensor = reduce
    validator.check_tensor = staticmethod(check)
    setattr(pickler, _PATCHED, True)
    return True
