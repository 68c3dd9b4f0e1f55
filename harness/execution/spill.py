"""Objects kept on disk until they are read back: what the deferred relations need of every judged case.

A run with the process relations (`second`, `threads`, `kernels`: harness/execution/relation_exec.py) judges
them after the lanes are done, so until then it keeps, for every case and target, the case's inputs, oracle,
relation runs and the target's answer. In memory that grows with the cases: on 2026-11-30 a 32nd of the
nightly (44 cases, 35 targets, gradients) grew the controller by 652 MB, and a quarter ran a 24 GiB host out
of memory. Here each is pickled to an unnamed temporary file as it is judged and read back when its turn comes.

A value that cannot be pickled stays in memory (`Ref.value`): the run goes on, it only costs memory. The file
lies in the temporary directory (`TMPDIR`); where that is a tmpfs, it is memory again.
"""

from __future__ import annotations

import pickle
import tempfile
import threading
from dataclasses import dataclass
from typing import IO, Any


@dataclass(frozen=True)
class Ref:
    """Where a spilled value lies in the file (offset, length), or the value itself where it would not pickle."""

    offset: int = -1
    length: int = 0
    value: Any = None


class Spill:
    """An append-only file of pickled values, shared by the run's lanes (a lock orders the writes)."""

    def __init__(self, directory: str | None = None) -> None:
        self._dir = directory
        self._file: IO[bytes] | None = None
        self._end = 0
        self._lock = threading.Lock()
        self.spilled = 0  # bytes written, for the run's summary and tests

    def put(self, value: Any) -> Ref:
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - a value that will not pickle is kept as it is
            return Ref(value=value)
        with self._lock:
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="convdiff-spill-", dir=self._dir)  # noqa: SIM115 - open until close()
            self._file.seek(self._end)
            self._file.write(data)
            ref = Ref(self._end, len(data))
            self._end += len(data)
            self.spilled += len(data)
        return ref

    def get(self, ref: Ref) -> Any:
        if ref.offset < 0:
            return ref.value
        with self._lock:
            assert self._file is not None
            self._file.seek(ref.offset)
            data = self._file.read(ref.length)
        return pickle.loads(data)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
