"""Where and how a run happened: enough to tell two nights' results apart."""

from __future__ import annotations

import datetime
import importlib.metadata
import platform
import shlex
import sys
from typing import Any

from harness.execution.host import cpu_facts, env_settings, run_host_key, target_host_keys


def fingerprint(argv: list[str], targets: dict[str, dict[str, str]], skipped: dict[str, str],
                target_facts: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """`target_facts`: each target's live host facts (Backend.host_facts), keyed like `targets`."""
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    host = cpu_facts()
    target_facts = target_facts or {}
    keys = {t: [k] for t, k in target_host_keys(host, target_facts, targets).items()}
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "platform": platform.platform(),
        "cpu": host["cpu_model"],
        "host": host,
        "env": env_settings(),
        "host_facts": target_facts,
        "host_key": run_host_key(keys),
        # per target, a list: merged shards may have run one target on several hosts
        "target_host_keys": keys,
        "python": sys.version.split()[0],
        "convdiff": version("convdiff"),
        "numpy": version("numpy"),
        "command": shlex.join(["convdiff", *argv]),
        "targets": targets,
        "skipped": skipped,
    }
