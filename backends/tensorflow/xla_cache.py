"""TensorFlow's XLA executables on disk, so a warm run does not compile them again (issue 26).

Two paths compile with XLA per case: `tf-xla` (its tf.function has jit_compile=True) and Keras, whose
TensorFlow backend compiles a conv with XLA where TF's CPU kernels have none (grouped convs, NC* 3-D).
TF keeps every executable it compiles in `--tf_xla_persistent_cache_directory` (TF_XLA_FLAGS) and loads
it back when the same cluster is compiled again, so the executable a warm run uses is the one the cold
run compiled for the same graph: nothing it computes can differ. Measured (AVX2 EPYC, full corpus,
`--compiled-sample 16`): tensorflow-keras 60.5 -> 33.2 s and tf-xla 13.9 -> 3.9 s of case time warm,
statuses, errors and messages identical.

TF names an entry by the compiled function's signature (its name, which carries a per-process trace
counter, and argument types) and a fingerprint of its HLO (the graph, constants included), and loads an
entry only for the same HLO: a changed case misses, it never finds another graph's executable. Because of
the counter, a worker hits only where it traces the same functions in the same order as the run that
stored them, as a second `convdiff run` of the same cases does; a worker that ran other cases first
(pytest's warm pool, another selection) misses and compiles, as it would without the cache.
TF's key leaves out what the compiled code was built for, so the
directory is keyed here by the TensorFlow version, every CPU flag (XLA targets the host CPU: an entry
compiled with AVX-512 would be illegal on an AVX2 machine that finds the same cache), the XLA flags and
the oneDNN settings (`KEYED_ENV`: the host matrix runs one cache under several).
Not under `CONVDIFF_CACHE_WRITE=second` (`convdiff fuzz`: its graphs rarely come back, and TF cannot
write an entry only on its second sighting), nor where the user's TF_XLA_FLAGS already name a directory.
"""

from __future__ import annotations

import hashlib
import json
import os

from backends.artifacts import cache_base

FLAG = "--tf_xla_persistent_cache_directory"
# settings that may change what XLA's CPU compiler emits (oneDNN rewrites follow TF's oneDNN switch and cap)
KEYED_ENV = ("XLA_FLAGS", "TF_ENABLE_ONEDNN_OPTS", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")


def cpu_flags() -> list[str]:
    """Every flag of the CPU (the first processor's line of /proc/cpuinfo, sorted; [] elsewhere): what
    XLA's host-targeting compiler may use. (harness.execution.host reads the kernel-selecting subset for
    the controller; a backend module does not import the execution stage.)"""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            line = next((ln for ln in fh if ln.startswith("flags")), "")
    except OSError:
        return []
    return sorted(set(line.partition(":")[2].split()))


def enable(tf_version: str) -> str | None:
    """Point TF_XLA_FLAGS at this host's directory (before XLA's first compile, which reads the flags);
    returns the directory, or None where the cache stays off."""
    base = cache_base()
    flags = os.environ.get("TF_XLA_FLAGS", "")
    if base is None or FLAG in flags or os.environ.get("CONVDIFF_CACHE_WRITE", "").lower() == "second":
        return None
    doc = {"tf": tf_version, "cpu": cpu_flags(), "TF_XLA_FLAGS": flags,
           **{name: os.environ.get(name, "") for name in KEYED_ENV}}
    key = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]
    where = (base / "tf-xla" / key).resolve()
    where.mkdir(parents=True, exist_ok=True)
    os.environ["TF_XLA_FLAGS"] = f"{flags} {FLAG}={where}".strip()
    return str(where)
