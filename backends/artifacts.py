"""On-disk cache of what a converter or exporter makes for one case (an ONNX model, a flatbuffer,
a saved program), so that a warm run repeats no export or conversion (issue 26).

An entry is named by a key over everything that decides the artefact: the case's parameters
(without its seed: the digest of the arrays the model bakes in stands for what the seed drew),
the framework versions, and the digest of the adapter sources that write the model. A changed
case, framework or adapter therefore misses, and builds again. A refusal (the exporter raised)
is cached as well, as its one-line message, so it is not retried either. So is a build that kills
its process (paddle2onnx aborts on some models): while it builds, a worker names the entry in
`$CONVDIFF_CACHE/building/<pid>`; when a worker dies, the controller (harness/execution/pool.py) turns
that file into `<key>.crashed` holding the crash message (`settle_attempt`), and a later run reports the
case as that crash (`RememberedCrash`) instead of killing a worker again. A worker killed for a
timeout, or one stopped by the run's end, leaves nothing remembered.

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

from backends.base import RememberedCrash
from backends.digest import baked_arrays_digest

try:
    import fcntl
except ImportError:  # not POSIX: builds are not serialized (each worker may build the same key)
    fcntl = None  # type: ignore[assignment]
from harness.model.case import Case
from harness.numerics.inputs import Inputs

FORMAT = 1  # bump when the layout of an entry or the meaning of a key changes
BACKENDS = Path(__file__).resolve().parent
ATTEMPTS = "building"  # $CONVDIFF_CACHE/building/<pid>: "<kind>/<key>", the entry process <pid> is building
CLOCK_SLACK_S = 1.0  # file times come from a coarser clock than time.time(): an attempt file this much older
                     # than its worker's start still counts as the worker's own


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
        """The entry's files, the cached refusal message, or None on a miss; RememberedCrash where
        building the entry killed a worker before."""
        if self.root is None:
            return None
        crashed = self.root / f"{key}.crashed"
        if crashed.exists():
            raise RememberedCrash(f"{crashed.read_text()} (remembered: building this model killed a worker in "
                                  f"an earlier run, same key {key[:12]}; not built again: CONVDIFF_CACHE=off "
                                  f"builds it)")
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

    def store_failure(self, key: str, message: str, suffix: str = ".failed") -> None:
        """Cache a refusal (`.failed`) or a crash (`.crashed`) as its message."""
        if self.root is None or not self._should_store(key):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{key[:12]}-", suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(message)
        os.replace(tmp, self.root / f"{key}{suffix}")

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
                with self.attempt(key):
                    files = build()
            except Exception as exc:  # noqa: BLE001 - the converter refused: the caller reports it
                message = refusal(exc)
                self.store_failure(key, message)
                return message, "refused"
            self.store(key, files)
            return files, "built"

    @contextlib.contextmanager
    def attempt(self, key: str) -> Iterator[None]:
        """Name the entry in `building/<pid>` while `build` runs: left behind only if the process dies."""
        path = attempt_file(os.getpid())
        if self.root is None or path is None:
            yield
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{self.root.name}/{key}")
        try:
            yield
        finally:
            path.unlink(missing_ok=True)

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


def attempt_file(pid: int) -> Path | None:
    base = cache_base()
    return None if base is None else base / ATTEMPTS / str(pid)


def settle_attempt(pid: int, started: float, crash: str | None) -> str | None:
    """The controller's part, when worker `pid` (started at `started`, time.time()) is gone: the entry it
    was building, if any (None otherwise), remembered as crashed with the message `crash`, or, with
    `crash` None (a timeout, a stop), forgotten. An attempt file older than the worker is a dead process's
    that had the same pid: removed, never remembered."""
    path = attempt_file(pid)
    if path is None:
        return None
    try:
        made, entry = path.stat().st_mtime, path.read_text().strip()
    except OSError:
        return None
    path.unlink(missing_ok=True)
    kind, _, key = entry.partition("/")
    if crash is None or made < started - CLOCK_SLACK_S or not key:
        return None
    ArtifactCache(kind).store_failure(key, crash, ".crashed")
    return entry
