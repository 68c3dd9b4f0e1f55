"""On-disk cache of compiled TVM modules: compiling is most of TVM's cost per case.

A module is stored as the shared library `exe.export_library` writes, named by a
hash of everything that affects the build (op, shapes, attributes, dtype, layouts,
target, TVM version, backend variant, and embedded weights when an importer bakes
them in as constants). A second identical run then loads libraries and compiles
nothing. A build that fails is remembered too (`<key>.failed`, its first error
line), so it is not retried. Where: `$CONVDIFF_CACHE/tvm/` (default `.convdiff-cache/tvm/` under the
current directory); `CONVDIFF_CACHE=off` disables it; clear it with
`rm -rf .convdiff-cache/tvm`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 1  # bump when the stored artefact or the key's meaning changes


def cache_root() -> Path | None:
    """The TVM cache directory, or None when caching is switched off."""
    base = os.environ.get("CONVDIFF_CACHE", ".convdiff-cache")
    if base.lower() in ("off", "0", "none", ""):
        return None
    return Path(base) / "tvm"


def cache_key(parts: dict[str, Any]) -> str:
    """A stable digest of the build description (JSON with sorted keys)."""
    text = json.dumps({"format": FORMAT, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def array_digest(*arrays: Any) -> str:
    """Digest of arrays an importer embeds as constants (they change the built module)."""
    h = hashlib.sha256()
    for a in arrays:
        if a is not None:
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
    return h.hexdigest()[:24]


class CachedBuildFailure(Exception):
    """This exact build failed before; its first error line is the message (no retry)."""


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    compile_s: float = 0.0


class CompileCache:
    """Load a compiled module by key, or build, export and store it atomically."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else cache_root()
        self.stats = CacheStats()

    def path(self, key: str) -> Path | None:
        return None if self.root is None else self.root / f"{key}.so"

    def get_or_build(self, key: str, build: Callable[[], Any]) -> tuple[Any, bool]:
        """(runtime module or executable, hit). `build()` returns a relax executable.

        Concurrent workers may build the same key: each writes a private temporary
        file and renames it into place, so readers never see a half-written library.
        """
        path = self.path(key)
        failed = None if path is None else path.with_suffix(".failed")
        if failed is not None and failed.exists():
            # A build that failed (export, import or compile) fails the same way again: a
            # second identical run should spend no time rebuilding it.
            self.stats.hits += 1
            raise CachedBuildFailure(failed.read_text(encoding="utf-8"))
        if path is not None and path.exists():
            import tvm

            try:
                mod = tvm.runtime.load_module(str(path))
                self.stats.hits += 1
                return mod, True
            except Exception:  # noqa: BLE001 - a damaged entry is rebuilt, not fatal
                path.unlink(missing_ok=True)
        start = time.perf_counter()
        try:
            exe = build()
        except Exception as exc:
            from .base import Unsupported

            if failed is not None and not isinstance(exc, Unsupported):  # only the framework's failures
                self._write_failure(failed, exc)
            raise
        self.stats.compile_s += time.perf_counter() - start
        self.stats.misses += 1
        if path is None:
            return exe, False
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{key}.{os.getpid()}.tmp.so")
        try:
            exe.export_library(str(tmp))
            os.replace(tmp, path)
        except Exception:  # noqa: BLE001 - no compiler/linker or a full disk: run uncached
            pass
        finally:
            tmp.unlink(missing_ok=True)
        return exe, False

    @staticmethod
    def _write_failure(failed: Path, exc: BaseException) -> None:
        from .base import first_line

        failed.parent.mkdir(parents=True, exist_ok=True)
        tmp = failed.with_name(f".{failed.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(first_line(exc), encoding="utf-8")
            os.replace(tmp, failed)
        except OSError:
            tmp.unlink(missing_ok=True)
