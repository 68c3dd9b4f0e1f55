"""convdiff installs three generic top-level packages (harness, backends, reports): say so clearly when
another project's package of the same name is the one Python finds, instead of failing later on an import.

Two cheap checks (a few file lookups), run by the CLI and by the pytest plugin when convdiff is asked for:
the three packages must come from one directory (a `reports/` of the user's own, on sys.path before
convdiff's, would not), and no other directory on sys.path may hold a package of the same name.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PACKAGES = ("harness", "backends", "reports")


class OwnershipError(Exception):
    """Another project's package shadows one of convdiff's top-level packages."""


def check() -> None:
    """Raise OwnershipError naming the clash, or return."""
    roots = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise OwnershipError(f"convdiff's top-level package '{name}' cannot be found (reinstall convdiff)")
        roots[name] = Path(spec.origin).resolve().parent.parent
    home = roots["harness"]
    for name, root in roots.items():
        if root != home:
            raise OwnershipError(
                f"'import {name}' finds {root / name}, not convdiff's ({home / name}): another project's package "
                f"of that name comes first on sys.path. Run convdiff from another directory or a virtual "
                f"environment of its own (convdiff installs the top-level packages {', '.join(PACKAGES)}).")
    for name in PACKAGES:  # a second package of the same name anywhere on sys.path: one hides the other
        found = {(Path(entry or ".") / name).resolve() for entry in sys.path
                 if (Path(entry or ".") / name / "__init__.py").is_file()}
        found.discard((home / name).resolve())
        if found:
            raise OwnershipError(
                f"another package named '{name}' is installed or on sys.path ({', '.join(map(str, sorted(found)))}) "
                f"beside convdiff's ({home / name}): convdiff installs the top-level packages "
                f"{', '.join(PACKAGES)}. Install convdiff in a virtual environment of its own.")
