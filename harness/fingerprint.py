"""Where and how a run happened: enough to tell two nights' results apart."""

from __future__ import annotations

import datetime
import importlib.metadata
import platform
import shlex
import sys
from typing import Any


def fingerprint(argv: list[str], targets: dict[str, dict[str, str]], skipped: dict[str, str]) -> dict[str, Any]:
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "python": sys.version.split()[0],
        "convdiff": version("convdiff"),
        "numpy": version("numpy"),
        "command": shlex.join(["convdiff", *argv]),
        "targets": targets,
        "skipped": skipped,
    }
