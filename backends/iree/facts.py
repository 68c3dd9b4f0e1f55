"""IREE's target CPU: what `--iree-llvmcpu-target-cpu=host` resolves to on this machine, read live.

iree-compile compiles a one-op module with the backend's target flags and dumps its configured
executable; the target attribute there names the CPU (`cpu = "emeraldrapids"`) and its features.
The answer is cached beside the modules (backends/artifacts.py, key: the IREE versions, the flags,
the CPU model and ISA flags), so a worker pays the compile (about a second) once per host; a failed
probe is not remembered.
"""

from __future__ import annotations

import json
from typing import Any

from backends.artifacts import ArtifactCache
from backends.base import HostFact
from backends.iree.compile import CompileFailed, compile_mlir

PROBE = """func.func @probe(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %0 = arith.addf %a, %b : tensor<64xf32>
  return %0 : tensor<64xf32>
}
"""


def target_facts(salt: dict[str, Any]) -> dict[str, HostFact]:
    """{iree_target_cpu, iree_cpu_features}: the CPU and kernel-relevant features IREE compiles for here."""
    import hashlib

    key = hashlib.sha256(json.dumps({"probe": PROBE, **salt}, sort_keys=True, default=str).encode()).hexdigest()[:32]

    cache = ArtifactCache("iree-host")
    hit = cache.load(key)
    if isinstance(hit, dict) and "facts.json" in hit:
        return json.loads(hit["facts.json"])
    try:
        compiled = compile_mlir(PROBE)
    except CompileFailed as exc:  # not cached: the next worker tries again
        raise CompileFailed(f"iree-compile cannot compile for the host CPU: {exc}") from None
    facts = {"iree_target_cpu": compiled.target_cpu or "unknown", "iree_cpu_features": compiled.features}
    cache.store(key, {"facts.json": json.dumps(facts).encode()})
    return facts
