"""The thread count of every torch path (Backend.set_threads): torch.set_num_threads, applied in setup.

It sets ATen's intra-op pool, which oneDNN, fbgemm, QNNPACK and inductor's OpenMP kernels run on.
"""

from __future__ import annotations

from typing import Any


class TorchThreads:
    """Mixin for a Backend whose setup() imports torch into `self.torch` and calls apply_threads()."""

    threads: int | None = None
    torch: Any = None

    def set_threads(self, n: int) -> None:
        self.threads = n

    def thread_count(self) -> int | None:
        return int(self.torch.get_num_threads())

    def apply_threads(self) -> None:
        if self.threads:
            self.torch.set_num_threads(self.threads)
