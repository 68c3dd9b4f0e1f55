"""On-disk cache of what a converter or exporter makes for one case (an ONNX model, a flatbuffer,
a saved program), so that a warm run repeats no export or conversion (issue 26).

An entry is named by a key over everything that decides the artefact: the case's parameters
(without its seed: the digest of the arrays the model bakes in stands for what the seed drew),
the framework versions, and the digest of the adapter sources that write the model. A changed
case, framework or adapter therefore misses, and builds again. A refusal (the exporter raised)
is cached as well, as its one-line message, so it is not retried either.

Layout: `$CONVDIFF_CACHE/<kind>/<key>/` holding the entry's files, or `<key>.failed`; entries are
written into a temporary sibling and renamed, so a killed worker never leaves half an entry and
two workers storing the same key both succeed. A build holds `<key>.lock` (an empty file, flock), so
two adapters of one kind that reach a case together (litert, litert-ref) build it once. `CONVDIFF_CACHE=off` disables every cache;
`CONVDIFF_CACHE_WRITE=second` (set by `convdiff fuzz`, whose configurations rarely come back)
stores an entry only on its key's second sighting (a `<key>.seen` marker the first time).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from backends.digest import baked_arrays_digest

try:
    import fcntl
except ImportError:  # not POSIX: builds are not serialized (each worker may build the same key)
    fcntl = None  # type: ignore[assignment]
from harness.model.case import Case
from harness.numerics.inputs import Inputs

FORMAT = 1  # bump when the layout of an entry or the meaning of a key changes
BACKENDS = Path(__file__).resolve().parent


def cache_base() -> Path | None:
    """The root of every convdiff cache, or None when caching is switched off."""
    base = os.environ.get("CONVDIFF_CACHE", ".convdiff-cache")
    return None if base.lower() in ("off", "0", "none", "") else Path(base)


def sources_digest(names: Iterable[str]) -> str:
    """sha256 over adapter sources, named relative to backends/ (e.g. "onnx/model.py")."""
    h = hashlib.sha256()
    for name in sorted(names):
        h.update(name.encode())
        h.update((BACKENDS / name).read_bytes())
    return h.hexdigest()


def case_key(case: Case, inputs: Inputs, salt: dict[str, Any]) -> str:
    """The key of one case's artefact: its parameters without the seed, the digest of the arrays the
    model bakes in, and `salt` (framework versions, sources digest, anything else the adapter adds)."""
    params = case.params()
    params.pop("seed", None)
    doc = json.dumps({"format": FORMAT, "case": params, "salt": salt}, sort_keys=True, default=str)
    h = hashlib.sha256(doc.encode())
    return baked_arrays_digest(case, inputs, h)[:32]


class ArtifactCache:
    """One kind of artefact (a subdirectory of the cache): load, store, or build on a miss."""

    def __init__(self, kind: str) -> None:
        base = cache_base()
        self.root = None if base is None else base / kind

    def load(self, key: str) -> dict[str, bytes] | str | None:
        """The entry's files, the cached refusal message, or None on a miss."""
        if self.root is None:
            return None
        failed = self.root / f"{key}.failed"
        if failed.exists():
            return failed.read_text()
        entry = self.root / key
        if not entry.is_dir():
            return None
        try:
            return {p.name: p.read_bytes() for p in entry.iterdir()}
        except OSError:
            return None

    def _should_store(self, key: str) -> bool:
        if self.root is None:
            return False
        if os.environ.get("CONVDIFF_CACHE_WRITE", "").lower() != "second":
            return True
        seen = self.root / f"{key}.seen"
        if seen.exists():
            return True
        self.root.mkdir(parents=True, exist_ok=True)
        seen.touch()
        return False

    def store(self, key: str, files: dict[str, bytes]) -> None:
        if self.root is None or not self._should_store(key):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{key[:12]}-"))
        try:
            for name, data in files.items():
                (tmp / name).write_bytes(data)
            os.replace(tmp, self.root / key)
        except OSError:  # another worker stored it first
            shutil.rmtree(tmp, ignore_errors=True)

    def store_failure(self, key: str, message: str) -> None:
        if self.root is None or not self._should_store(key):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{key[:12]}-", suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(message)
        os.replace(tmp, self.root / f"{key}.failed")

    def fetch(self, key: str, build: Callable[[], dict[str, bytes]],
              refusal: Callable[[Exception], str]) -> tuple[dict[str, bytes] | str, str]:
        """(files, how) from the cache or from `build`; on a refusal (build raised), (message, how),
        with the message from `refusal(exc)`, and the refusal cached."""
        hit = self.load(key)
        if hit is not None:
            return hit, f"cache hit {key[:12]}"
        with self.building(key):  # two workers on one key (litert, litert-ref): the second waits, then hits
            hit = self.load(key)
            if hit is not None:
                return hit, f"cache hit {key[:12]}"
            try:
                files = build()
            except Exception as exc:  # noqa: BLE001 - the converter refused: the caller reports it
                message = refusal(exc)
                self.store_failure(key, message)
                return message, "refused"
            self.store(key, files)
            return files, "built"

    @contextlib.contextmanager
    def building(self, key: str) -> Iterator[None]:
        """Hold `<key>.lock` (an flock: a worker that dies mid-build releases it) while building `key`,
        so that adapters sharing a kind (litert and litert-ref convert the same flatbuffer) build it
        once when they reach the same case together. Without a cache, or where flock is missing, no lock."""
        if self.root is None or fcntl is None:
            yield
            return
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{key}.lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
