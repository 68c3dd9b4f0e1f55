"""Backend names -> adapter objects, from the `convdiff.backends` entry point group.

Every adapter, convdiff's own included, is registered the same way: a distribution declares
`name = "module:Class"` under `[project.entry-points."convdiff.backends"]` in its pyproject.toml
(convdiff's own list is in convdiff's pyproject.toml; there is no second one). A one-off adapter needs no
package: `--backends module:Class` or `--backends name=module:Class` names a class importable from the
working directory or PYTHONPATH. Such a spec is kept in the environment (CONVDIFF_PLUGINS), so that the
worker processes, which import their backend themselves, resolve the same name to the same class.

Modules are imported on demand; frameworks only in workers (an adapter imports its framework in setup()).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from backends.base import Backend, Capabilities, first_line

GROUP = "convdiff.backends"
REPRO_GROUP = "convdiff.repro"
PLUGINS_ENV = "CONVDIFF_PLUGINS"  # name=module:Class;... one-off adapters, inherited by the workers
TEST_PREFIXES = {
    "fault": "backends.testing.fault:FaultBackend",
    "mutant": "backends.testing.mutants:MutantBackend",
}
NAME = re.compile(r"[a-z0-9][a-z0-9_.+-]*")
SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


class UnknownBackend(ValueError):
    pass


class Unloadable(Backend):
    """An installed distribution's adapter whose module does not import here (require_api against another
    contract, a dependency that fails): "installed but broken", so its setup() raises in the worker and the run
    fails naming it (exit 1) while every other target still runs; never a usage error that stops them all."""

    capabilities = Capabilities(devices=("cpu",))
    devices = ("cpu",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def unavailable_reason(self) -> str | None:
        return None

    def version(self) -> str:
        return "unknown"

    def setup(self, device: str) -> None:
        raise UnknownBackend(self.reason)


@dataclass(frozen=True)
class Registration:
    """One registered adapter: its name, where its class lives, and who provides it."""

    name: str
    spec: str        # module:Class
    source: str      # "convdiff", the distribution that registers it, or "module (one-off)"
    source_version: str = ""

    def load(self) -> type[Backend]:
        return load_class(self.spec)


def load_class(spec: str) -> type[Backend]:
    """Import `module:Class`; the working directory is searched too, as `python -m` would."""
    module, _, cls = spec.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = getattr(importlib.import_module(module), cls)
    except ModuleNotFoundError as exc:
        raise UnknownBackend(f"cannot import '{module}' for backend {spec}: {exc}") from None
    except AttributeError:
        raise UnknownBackend(f"module '{module}' has no class '{cls}' (backend {spec})") from None
    except Exception as exc:  # noqa: BLE001 - the adapter's module raised on import (require_api, a dependency)
        raise UnknownBackend(f"cannot import '{module}' for backend {spec}: {first_line(exc)}") from None
    if not (isinstance(obj, type) and issubclass(obj, Backend)):
        raise UnknownBackend(f"{spec} is not a subclass of backends.base.Backend")
    return obj


@functools.cache
def _installed() -> dict[str, Registration]:
    """The entry point group. In a checkout convdiff's own list is read from its pyproject.toml, the source of
    truth, so that installed metadata that lags behind it (an egg-info written before an entry was added) does
    not hide a backend. A name that two distributions register goes to convdiff's own, else to the first
    distribution by name, whatever the order of sys.path; the others are listed by clashes()."""
    regs: list[Registration] = []
    # each distribution's metadata parsed once, not once per entry point (convdiff's ~40: 0.1-0.2 s of every
    # worker's and controller's start)
    named: dict[int, tuple[str, str]] = {}
    for ep in importlib.metadata.entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        if dist is not None and id(dist) not in named:
            meta = dist.metadata
            named[id(dist)] = (meta["Name"], meta.get("Version") or getattr(dist, "version", ""))
        name, version = named[id(dist)] if dist is not None else ("unknown", "")
        if name == "convdiff" and PYPROJECT.exists():
            continue
        regs.append(Registration(ep.name, ep.value, name, version))
    if PYPROJECT.exists():
        project = tomllib.loads(PYPROJECT.read_text())["project"]
        for name, spec in project.get("entry-points", {}).get(GROUP, {}).items():
            regs.append(Registration(name, spec, "convdiff", project.get("version", "")))
    found: dict[str, Registration] = {}
    _CLASHES.clear()
    # convdiff's own first, then each distribution's, by name (entry_points.txt lists a group sorted)
    for reg in sorted(regs, key=lambda r: (r.source != "convdiff", r.source, r.name)):
        kept = found.setdefault(reg.name, reg)
        if kept.spec != reg.spec:
            _CLASHES.setdefault(reg.name, []).append(reg)
    return found


_CLASHES: dict[str, list[Registration]] = {}


def clashes() -> list[str]:
    """One line per backend name that more than one distribution registers: which one is used."""
    _installed()
    return [f"backend name '{name}' is registered by {found.source} ({found.spec}) and by "
            + ", ".join(f"{r.source} ({r.spec})" for r in others) + f": {found.source}'s is used"
            for name, others in _CLASHES.items() for found in [_installed()[name]]]


def _one_off() -> dict[str, Registration]:
    """The one-off adapters of this run (CONVDIFF_PLUGINS), in the order named."""
    found: dict[str, Registration] = {}
    for item in filter(None, os.environ.get(PLUGINS_ENV, "").split(";")):
        name, _, spec = item.partition("=")
        found[name] = Registration(name, spec, f"{spec.partition(':')[0]} (one-off)")
    return found


def registered() -> dict[str, Registration]:
    """Every backend name that resolves to a real adapter: installed entry points, then one-offs."""
    return {**_installed(), **_one_off()}


def register_spec(text: str) -> str:
    """`module:Class` or `name=module:Class`: register a one-off adapter for this process and its workers;
    its name ("name", else the class's `name` attribute, else the module:Class text itself)."""
    name, _, spec = text.rpartition("=")
    if not SPEC.fullmatch(spec):
        raise UnknownBackend(f"'{text}' is not a backend name nor module:Class")
    cls = load_class(spec)
    name = name or getattr(cls, "name", "") or spec
    if name != spec and not NAME.fullmatch(name):
        raise UnknownBackend(f"backend name '{name}' (for {spec}): use lower-case letters, digits and . _ + -")
    taken = _installed().get(name)
    if taken is not None and taken.spec != spec:
        raise UnknownBackend(f"backend name '{name}' is already registered by {taken.source} ({taken.spec}); "
                             f"give yours a name of its own: NAME={spec}")
    plugins = _one_off()
    plugins[name] = Registration(name, spec, "")
    os.environ[PLUGINS_ENV] = ";".join(f"{n}={r.spec}" for n, r in plugins.items())
    return name


def cli_name(name: str) -> str:
    """How a command line in another process names this backend: a one-off adapter (CONVDIFF_PLUGINS) as
    `name=module:Class`, which that process cannot resolve from the name alone; any other by its name."""
    reg = _one_off().get(name)
    return name if reg is None or reg.spec == name else f"{name}={reg.spec}"


def get_backend(name: str) -> Backend:
    """An adapter object for a backend name (`torch`, a plugin's name, `fault:segfault`, `mutant:flip_kernel`)."""
    reg = registered().get(name)
    if reg is not None:
        try:
            adapter = reg.load()()
        except UnknownBackend as exc:
            if reg.source.endswith("(one-off)") or reg.source == "":
                raise
            adapter = Unloadable(str(exc))  # an installed plugin that cannot load is a broken target
        adapter.name = name  # records carry the name it was registered under
        return adapter
    prefix, _, arg = name.partition(":")
    if prefix in TEST_PREFIXES and arg:
        try:
            return load_class(TEST_PREFIXES[prefix])(arg)  # type: ignore[call-arg]
        except ValueError as exc:
            raise UnknownBackend(str(exc)) from None
    known = ", ".join([*registered(), *(f"{p}:<mode>" for p in TEST_PREFIXES)])
    raise UnknownBackend(f"unknown backend '{name}' (known: {known}; or module:Class, name=module:Class)")


def parse_backends(text: str) -> list[str]:
    """Validate a comma-separated list of names and module:Class specs; raises UnknownBackend.
    Specs are registered (register_spec) and come back as their names."""
    names = []
    for item in (n.strip() for n in text.split(",")):
        if not item:
            continue
        if item.partition(":")[0] not in TEST_PREFIXES and (":" in item or "=" in item):
            item = register_spec(item)
        get_backend(item)
        names.append(item)
    if not names:
        raise UnknownBackend("no backend named")
    return list(dict.fromkeys(names))


def real_backends() -> list[str]:
    """Every registered backend name (installed or not), test-only ones excluded."""
    return list(registered())


def installed_backends() -> list[str]:
    """Registered backends whose framework is importable (checked without importing it)."""
    return [n for n in registered() if get_backend(n).unavailable_reason() is None]
