"""The third IREE step: a compiled .vmfb loaded into the IREE runtime (iree.runtime) and one function called.

A module is loaded on the `local-task` driver (IREE's multi-threaded CPU driver, the one
`iree.runtime.load_vm_flatbuffer` picks for llvm-cpu), its context kept alive as long as its
functions are called. A batch module (many cases' functions, backends/iree/batch.py) is loaded once
and kept while its cases run; at most KEEP modules are held.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

DRIVER = "local-task"
KEEP = 4


class Modules:
    """Loaded .vmfb modules by a name (the cache key of the file), least recently used dropped first."""

    def __init__(self) -> None:
        import iree.runtime as rt

        self.rt = rt
        self.loaded: OrderedDict[str, Any] = OrderedDict()

    def function(self, name: str, vmfb: bytes, function: str) -> Any:
        """The module's function `function`, loading `vmfb` under `name` unless it is loaded."""
        module = self.loaded.get(name)
        if module is None:
            config = self.rt.Config(DRIVER)
            context = self.rt.SystemContext(config=config)
            context.add_vm_module(self.rt.VmModule.copy_buffer(context.instance, vmfb))
            module = (context, context.modules.module)  # the context owns the module's state: kept with it
            self.loaded[name] = module
            while len(self.loaded) > KEEP:
                self.loaded.popitem(last=False)
        else:
            self.loaded.move_to_end(name)
        return module[1][function]


def call(fn: Any, arrays: tuple[np.ndarray, ...]) -> np.ndarray:
    """One call on host arrays; the first result, copied to a host array."""
    result = fn(*(np.ascontiguousarray(a) for a in arrays))
    if isinstance(result, (list, tuple)):
        result = result[0]
    return np.asarray(result.to_host() if hasattr(result, "to_host") else result)
