"""Framework families: which targets belong together in the report's op x target matrix.

A family is the package under `backends/` that holds the adapter (`backends.torch.inductor:...` is in
the torch family; `backends.onnx.*` holds ONNX Runtime, OpenVINO and the converters that end there),
read from the registry without importing any adapter. A name the registry does not know (an adapter
from an old results file, a one-off `module:Class`) falls back to its prefix: `tf-*` and `keras*` are
tensorflow, `mutant:*` and `fault:*` the test adapters.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# name prefix -> family, for names the registry does not know (checked in this order)
PREFIXES = (("torch", "torch"), ("tensorflow", "tensorflow"), ("tf", "tensorflow"), ("keras", "tensorflow"),
            ("litert", "litert"), ("tflite", "litert"), ("paddle", "paddle"), ("jax", "jax"), ("tvm", "tvm"),
            ("onnx", "onnx"), ("openvino", "onnx"), ("mutant", "testing"), ("fault", "testing"))
# the order families are shown in: the big eager frameworks first, the compilers and converters after
ORDER = ("torch", "tensorflow", "litert", "paddle", "jax", "onnx", "tvm", "testing")
LABELS = {"onnx": "onnx (onnxruntime, openvino, converters)", "tensorflow": "tensorflow (tf, keras, tf-xla)",
          "testing": "testing (mutants, faults)"}


@functools.cache
def _registered_modules() -> dict[str, str]:
    """backend name -> the module of its adapter class, from entry points (no adapter is imported)."""
    try:
        from backends.registry import TEST_PREFIXES, registered

        found = {name: reg.spec.partition(":")[0] for name, reg in registered().items()}
        found.update({prefix: spec.partition(":")[0] for prefix, spec in TEST_PREFIXES.items()})
        return found
    except Exception:  # noqa: BLE001 - a broken plugin must not stop a report; prefixes still work
        return {}


def family(backend: str) -> str:
    """The family of a backend name (not a target: no `-cpu` suffix)."""
    modules = _registered_modules()
    module = modules.get(backend) or modules.get(backend.partition(":")[0]) or ""
    if ":" in backend and not module and "." in backend.partition(":")[0]:
        module = backend.partition(":")[0]  # a one-off module:Class spec
    parts = module.split(".")
    if len(parts) >= 3 and parts[0] == "backends":
        return parts[1]
    head = re.split(r"[-_:.+]", backend, maxsplit=1)[0].lower()
    for prefix, fam in PREFIXES:
        if head.startswith(prefix):
            return fam
    return head or "other"


def label(fam: str) -> str:
    return LABELS.get(fam, fam)


def group_targets(targets: Iterable[str]) -> list[tuple[str, list[str]]]:
    """[(family, its targets sorted)] in ORDER, then any other family by name. A target is `backend-device`."""
    groups: dict[str, list[str]] = {}
    for t in sorted(set(targets)):
        groups.setdefault(family(t.rsplit("-", 1)[0]), []).append(t)
    rank = {f: i for i, f in enumerate(ORDER)}
    return sorted(groups.items(), key=lambda kv: (rank.get(kv[0], len(ORDER)), kv[0]))
