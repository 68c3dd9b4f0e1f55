"""Many cases lowered as one ExecuTorch program (Backend.prepare), and how a case finds its program again.

Lowering has a large fixed cost per call, whatever the graph: `to_edge_transform_and_lower` rebuilds torch's
decomposition tables on each `run_decompositions` (measured 2026-11-28 on this 2-core Xeon, CPU seconds a float
case: 1.35 lowered alone with the XNNPACK partitioner, 0.22 as one of 16 members of one program; 0.73 and 0.11
without a partitioner). So `prepare` exports up to `batch_size` uncached float cases as one module
(backends/torch/module.py `side_by_side`: member i's inputs in turn, one output each, no op joining two members),
lowers it once and stores:
- the program under `<kind>-batch/<batch key>`: `program.pte` and `batch.json` (every input's shape and dtype);
- under each member's own key (the key its own build has): `member.json`, naming the batch, the member's output
  index, its first input's position and its own delegation (program.py `delegation` of its output).
run() of a member loads the batch's program and executes it with its own inputs in its place and zeros for the
others (no op joins members, so they cannot change its output), and returns its output. Members are grouped up
to BATCH_MACS multiply-adds as `cost` counts them (each member's run executes the whole program); larger cases
build alone.

A batch is executed once right after it is built, with every member's real inputs, before anything is stored: a
batch that raises is halved, as is one whose lowering raises; one whose execution kills the worker leaves nothing
stored (the prepare is lost, the pool starts a new worker), so its members build alone in run(), each answering for
itself. A stored batch that kills the worker when a member's run executes it (another host, say) is remembered as
crashed (backends/artifacts.py `attempt`: the crash is charged to that member once); later members then build
alone (`Batches.run` answers None). A member alone is stored under its key with `alone` in the salt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from backends.artifacts import ArtifactCache
from backends.base import RememberedCrash
from backends.executorch import program
from backends.executorch.runtime import Loaded
from backends.torch import epilogue as torch_epilogue
from harness.model.case import Case
from harness.model.shard import case_macs
from harness.numerics.inputs import Inputs

FORMAT = 1  # of the entries written here (in the cache key's salt): bump when they change
# a batch's multiply-adds on the runtime's portable convolution (~270 M/s on this host; 32 runs of 4 M: ~0.5 s);
# XNNPACK's float32/float16 convolutions count 1/64 of theirs (~31 G/s measured on a float32 3x3 conv)
BATCH_MACS = 4_000_000
XNNPACK_SPEEDUP = 64


def cost(case: Case, delegate: bool) -> int:
    """A case's multiply-adds as the batch budget counts them (what each member's run executes)."""
    fast = delegate and case.dtype in ("float32", "float16")
    return case_macs(case) // (XNNPACK_SPEEDUP if fast else 1)


def refused_at_run(case: Case) -> bool:
    """Whether XNNPACK refuses the delegated case only when the program runs, after a lowering that succeeds: a
    float32 or float16 transposed conv (the dtypes it delegates) whose output_padding is not below its stride
    (cases/known_issues.yaml executorch-xnnpack-transpose-output-padding-ge-stride: XNNPACK's deconvolution takes
    output_padding as an adjustment that must be smaller than the stride). In a batch, such a member fails the
    whole program, and the halving that finds it lowers the others again: one such case among the smoke tier's
    29 made nine lowerings (five that failed) of what two lowered once it was left out, and the smoke tier on
    executorch took 74 s instead of 47 s (2026-12-02, 2-core AMD EPYC Zen 4, from an empty cache)."""
    return case.transpose and case.dtype in ("float32", "float16") and any(
        o >= s for o, s in zip(case.output_padding, case.stride))


def member_arrays(case: Case, inputs: Inputs) -> list[np.ndarray]:
    """The program inputs of one case, in order: x, then each residual."""
    return [inputs.x, *torch_epilogue.residuals(case, inputs.epilogue).values()]


def groups(items: Sequence[Any], macs: Callable[[Any], int], size: int) -> list[list[Any]]:
    """Consecutive groups of at most `size` items and BATCH_MACS multiply-adds (an item above it: alone)."""
    out: list[list[Any]] = []
    cur: list[Any] = []
    total = 0
    for item in items:
        m = macs(item)
        if cur and (len(cur) >= size or total + m > BATCH_MACS):
            out.append(cur)
            cur, total = [], 0
        cur.append(item)
        total += m
    if cur:
        out.append(cur)
    return out


class Batches:
    """Batched programs of one kind (`executorch` or `executorch-portable`) and the members' pointers."""

    def __init__(self, cache: ArtifactCache, kind: str, delegate: bool) -> None:
        self.cache, self.delegate = cache, delegate
        self.programs = ArtifactCache(f"{kind}-batch")

    def build(self, todo: list[tuple[str, Case, Inputs]], size: int) -> int:
        """Build and store `todo` ((key, case, inputs) of uncached cases) in batches; cases stored. A member
        the delegate refuses when the program runs (`refused_at_run`) builds alone in run()."""
        if self.cache.root is None:
            return 0
        todo = [t for t in todo if not (self.delegate and refused_at_run(t[1]))]
        return sum(self._build(group) for group in groups(todo, lambda t: cost(t[1], self.delegate), size))

    def _build(self, items: list[tuple[str, Case, Inputs]]) -> int:
        if len(items) < 2:
            return 0  # alone: run() builds it and records its own answer
        arrays = [member_arrays(case, inputs) for _, case, inputs in items]
        bkey = hashlib.sha256("".join(k for k, _, _ in items).encode()).hexdigest()[:32]
        try:
            pte, lowered = program.build_batch([(c, i) for _, c, i in items], self.delegate)
            Loaded(pte).run([a_to_tensor(a) for member in arrays for a in member])
        except Exception:  # noqa: BLE001 - a member the exporter, lowering or runtime refuses: halve
            half = len(items) // 2
            return self._build(items[:half]) + self._build(items[half:])
        flat = [a for member in arrays for a in member]
        layout = [[list(a.shape), a.dtype.name] for a in flat]
        self.programs.store(bkey, {"program.pte": pte, "batch.json": json.dumps({"inputs": layout}).encode()})
        at = 0
        for i, ((key, _, _), member) in enumerate(zip(items, arrays)):
            doc = {"batch": bkey, "index": i, "offset": at, "members": len(items), "delegation": lowered[i]}
            self.cache.store(key, {"member.json": json.dumps(doc).encode()})
            at += len(member)
        return len(items)

    def run(self, doc: dict[str, Any], arrays: list[np.ndarray]) -> Any:
        """The member's output from its batch's program, or None when the batch is gone or remembered as
        crashed (then the member builds alone). The runtime's refusal propagates (RuntimeFailure)."""
        try:
            files = self.programs.load(doc["batch"])
        except RememberedCrash:
            return None
        if not isinstance(files, dict) or "program.pte" not in files:
            return None
        layout = json.loads(files["batch.json"])["inputs"]
        args = [np.zeros(shape, dtype=np.dtype(dtype) if dtype != "bfloat16" else _bf16()) for shape, dtype in layout]
        for j, a in enumerate(arrays):
            args[doc["offset"] + j] = a
        with self.programs.attempt(doc["batch"]):  # a crash here is remembered as the batch's
            outs = Loaded(files["program.pte"]).run([a_to_tensor(a) for a in args])
        return outs[doc["index"]]


def _bf16() -> Any:
    import ml_dtypes

    return ml_dtypes.bfloat16


def a_to_tensor(a: np.ndarray) -> Any:
    """numpy -> a contiguous torch tensor (bfloat16 through its bits), as the runtime wants its inputs."""
    from backends.torch.module import to_tensor

    return to_tensor(np.ascontiguousarray(a))
