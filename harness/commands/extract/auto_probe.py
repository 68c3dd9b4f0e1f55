"""`convdiff extract package.module:callable` without --framework: one process finds the framework and probes.

`python -m harness.commands.extract.auto_probe ARGS_JSON OUT_JSON`: imports the model's module (and the
attribute path) first, with nothing of a framework imported yet, looks which of torch and keras it
imported, writes that list to OUT_JSON + ".frameworks", then runs that framework's probe in the same
process (probe_io's protocol). Before, a process of its own only looked, and the probe's process
imported the model again: a second framework import per extract (~2.7 s for a torchvision model).

Exit status: the probe's (0, 2 for a problem with the model, else a crash); probe_io.IMPORT_FAILED when
the model cannot be imported (the traceback on stderr); probe_io.NOT_ONE when it imports neither
framework or both.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback

from harness.commands.extract.probe_io import IMPORT_FAILED, NOT_ONE
from harness.commands.extract.probe_io import main as probe_main

FRAMEWORKS = ("torch", "keras")


def main() -> int:
    args_path, out_path = sys.argv[1], sys.argv[2]
    with open(args_path) as f:
        spec = json.load(f)["model"]
    before = [n for n in FRAMEWORKS if n in sys.modules]
    if before:  # this module must not import a framework itself: the look below would be wrong
        raise RuntimeError(f"auto_probe imported {before} before the model")
    module, _, attr = spec.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except BaseException:  # noqa: BLE001 - the user's module may raise anything: the caller shows its last line
        traceback.print_exc()
        return IMPORT_FAILED
    found = [n for n in FRAMEWORKS if n in sys.modules]
    with open(out_path + ".frameworks", "w") as f:
        json.dump(found, f)
    if len(found) != 1:
        return NOT_ONE
    return probe_main(importlib.import_module(f"harness.commands.extract.{found[0]}_probe").probe)


if __name__ == "__main__":
    sys.exit(main())
