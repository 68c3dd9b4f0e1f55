"""On-disk cache of compiled TVM modules: compiling is most of TVM's cost per case.

A module is stored as the shared library `exe.export_library` writes, named by a
hash of everything that affects the build (op, shapes, attributes, dtype, layouts,
target, TVM version, backend variant, and embedded weights when an importer bakes
them in as constants). A second identical run then loads libraries and compiles
nothing. A build that fails is remembered too (`<key>.failed`, its first error
line), so it is not retried. Where: `$CONVDIFF_CACHE/tvm/` (default `.convdiff-cache/tvm/` under the
current directory); `CONVDIFF_CACHE=off` disables it; clear it with
`rm -rf .convdiff-cache/tvm`.

What a cold run pays (measured on cases/conv2d.yaml, float32, per case, on a busy 2-core
host): `tvm.compile` ~160 ms, then either the first VM call JIT-compiles the LLVM module
(~120 ms: the cache-off path), or `export_library` writes machine code (~120 ms) and links
it. TVM links with the C++ driver (`g++ -shared`, ~100 ms of process start-up); the objects
need no C++ runtime, so the cache links them with `ld -shared` (+ libgcc's helpers), ~5 ms,
and then runs the library it just wrote instead of JIT-compiling the same code a second
time. Cold with the cache: ~1.1x the cache-off time (was ~1.8x).
Batches (issue 26): `build_batch` merges many cases' `main` functions into one IRModule (each
renamed `main_<key>`), compiles and exports it once as `batch-<digest>.so`, and writes for each
case's key a `<key>.batch` index naming the library and function. A later `get_or_build` of that
key returns the function (`Batched`) instead of building. A batch that fails to compile is split
in halves until the failing case stands alone, which is then left to its own per-case build, so
its failure is attributed to it and recorded exactly as without batching.
A run whose configurations are new and will not come back (`convdiff fuzz`) sets
`CONVDIFF_CACHE_WRITE=second`: a key's first miss leaves only an empty `<key>.seen`
marker and the library is written on its second sighting.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.artifacts import cache_base

FORMAT = 2  # bump when the stored artefact or the key's meaning changes (2: batches; failures without "Rejected: ")


def cache_root() -> Path | None:
    """The TVM cache directory, or None when caching is switched off."""
    base = cache_base()
    return None if base is None else base / "tvm"


def write_policy() -> str:
    """`always` (default): store every new build; `second`: only a build seen before (a `.seen` marker)."""
    return "second" if os.environ.get("CONVDIFF_CACHE_WRITE", "").lower() == "second" else "always"


def _libgcc() -> list[str]:
    """libgcc.a, for the arithmetic helpers (half-precision conversions) that g++ would link in."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return []
    try:
        path = subprocess.run([cc, "-print-libgcc-file-name"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return []
    return [path] if path and Path(path).exists() else []


def make_linker() -> Callable[..., None] | None:
    """An `export_library` fcompile that links objects with `ld -shared`; None (TVM's default) without ld."""
    ld = shutil.which("ld")
    if ld is None or not sys.platform.startswith("linux"):
        return None
    extra = _libgcc()

    def link(output: str, objects: list[str], options: Any = None, **_: Any) -> None:
        if options or not all(str(o).endswith(".o") for o in objects):  # C sources or flags: TVM's way
            from tvm.support.cc import create_shared

            create_shared(output, objects, options)
            return
        done = subprocess.run([ld, "-shared", "-o", output, *map(str, objects), *extra], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ld -shared failed: {done.stderr.strip()[:500]}")

    return link


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


@dataclass(frozen=True)
class Batched:
    """A case's compiled function inside a batch library: the loaded library and the function's name."""

    library: Any
    path: Path
    function: str


class CachedBuildFailure(Exception):
    """This exact build failed before; its first error line is the message (no retry)."""


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    compile_s: float = 0.0
    export_s: float = 0.0
    deferred: int = 0  # misses not written: first sightings under CONVDIFF_CACHE_WRITE=second
    batched: int = 0  # cases compiled inside a batch module (build_batch)


class CompileCache:
    """Load a compiled module by key, or build, export and store it atomically."""

    def __init__(self, root: Path | None = None, policy: str | None = None) -> None:
        self.root = root if root is not None else cache_root()
        self.policy = policy or write_policy()
        self.stats = CacheStats()
        self._link: Callable[..., None] | bool | None = False  # made on the first export
        self._libraries: dict[Path, Any] = {}  # batch libraries loaded by this process

    def path(self, key: str) -> Path | None:
        return None if self.root is None else self.root / f"{key}.so"

    def known(self, key: str) -> bool:
        """Whether `key` is built (alone or in a batch) or remembered as failed: nothing to build."""
        path = self.path(key)
        return path is not None and any(path.with_suffix(s).exists() for s in (".so", ".failed", ".batch"))

    def batched(self, key: str) -> Batched | None:
        """The case's function in a batch library, if a batch built it (None otherwise)."""
        path = self.path(key)
        index = None if path is None else path.with_suffix(".batch")
        if index is None or not index.exists():
            return None
        try:
            info = json.loads(index.read_text(encoding="utf-8"))
            lib_path = index.parent / info["library"]
            if lib_path not in self._libraries:
                import tvm

                self._libraries[lib_path] = tvm.runtime.load_module(str(lib_path))
            return Batched(self._libraries[lib_path], lib_path, str(info["function"]))
        except Exception:  # noqa: BLE001 - a damaged index or library: the case builds alone
            index.unlink(missing_ok=True)
            return None

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
        batched = self.batched(key)
        if batched is not None:
            self.stats.hits += 1
            return batched, True
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
            from backends.base import Unsupported

            if failed is not None and not isinstance(exc, Unsupported):  # only the framework's failures
                self._write_failure(failed, exc)
            raise
        self.stats.compile_s += time.perf_counter() - start
        self.stats.misses += 1
        if path is None or not self._sighted(path):
            return exe, False
        return self._store(exe, path), False

    def _sighted(self, path: Path) -> bool:
        """Write this build now? Always, or under the `second` policy only when its marker exists."""
        if self.policy != "second":
            return True
        seen = path.with_suffix(".seen")
        if seen.exists():
            return True
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            seen.touch()
        except OSError:
            pass
        self.stats.deferred += 1
        return False

    def _store(self, exe: Any, path: Path) -> Any:
        """Export the library, and run from it: its machine code is made once, not again by the VM's JIT."""
        start = time.perf_counter()
        if self._link is False:
            self._link = make_linker()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.so")
        try:
            exe.export_library(str(tmp), fcompile=self._link or None)
            import tvm

            loaded = tvm.runtime.load_module(str(tmp))
            os.replace(tmp, path)
            path.with_suffix(".seen").unlink(missing_ok=True)
            return loaded
        except Exception:  # noqa: BLE001 - no linker, a full disk, a library that will not load: run uncached
            return exe
        finally:
            tmp.unlink(missing_ok=True)
            self.stats.export_s += time.perf_counter() - start

    def build_batch(self, entries: list[tuple[str, Callable[[], Any]]], compile_module: Callable[[Any], Any]) -> int:
        """Build many cases' modules as one (see the module docstring); the number of cases it holds.

        `entries`: (key, module factory) per case, as `get_or_build` would take them. A factory that
        raises is recorded as that key's failure, as `get_or_build` records it; a module with more
        than its `main`, or with module attributes, is left to its own build."""
        from backends.base import Unsupported

        if self.root is None:
            return 0
        mods = []
        for key, make_mod in entries:
            try:
                mod = make_mod()
            except Unsupported:
                continue
            except Exception as exc:  # noqa: BLE001 - the same failure get_or_build would record
                self._write_failure(self.root / f"{key}.failed", exc)
                continue
            if [gv.name_hint for gv in mod.get_global_vars()] == ["main"] and not (mod.attrs and len(mod.attrs)):
                mods.append((key, mod))
        return self._compile_batch(mods, compile_module)

    def _compile_batch(self, mods: list[tuple[str, Any]], compile_module: Callable[[Any], Any]) -> int:
        if len(mods) < 2:  # a case alone builds as it always did, in its own run
            return 0
        import tvm

        merged = tvm.IRModule({f"main_{key[:16]}": mod["main"].with_attr("global_symbol", f"main_{key[:16]}")
                               for key, mod in mods})
        start = time.perf_counter()
        try:
            exe = compile_module(merged)
        except Exception:  # noqa: BLE001 - one case's failure: halve until it stands alone
            half = len(mods) // 2
            return self._compile_batch(mods[:half], compile_module) + self._compile_batch(mods[half:], compile_module)
        self.stats.compile_s += time.perf_counter() - start
        assert self.root is not None
        lib = self.root / f"batch-{cache_key({'keys': [k for k, _ in mods]})}.so"
        loaded = self._store(exe, lib)
        if loaded is exe:  # not exported: the cases build alone
            return 0
        self._libraries[lib] = loaded
        for key, _ in mods:
            index = self.root / f"{key}.batch"
            tmp = index.with_name(f".{index.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"library": lib.name, "function": f"main_{key[:16]}"}), encoding="utf-8")
            os.replace(tmp, index)
        self.stats.batched += len(mods)
        return len(mods)

    @staticmethod
    def _write_failure(failed: Path, exc: BaseException) -> None:
        from backends.base import Rejected, first_line

        failed.parent.mkdir(parents=True, exist_ok=True)
        tmp = failed.with_name(f".{failed.name}.{os.getpid()}.tmp")
        # an adapter's Rejected already holds the framework's first line: stored as it is, so a cached
        # failure reads exactly as the build that failed
        text = (str(exc).strip().splitlines() or [""])[0] if isinstance(exc, Rejected) else first_line(exc)
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, failed)
        except OSError:
            tmp.unlink(missing_ok=True)
