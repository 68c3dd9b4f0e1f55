"""What the deferred relations wait on lies on disk (harness/execution/spill.py), and comes back the same."""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np

from harness.execution.spill import Spill


def test_values_come_back_equal_in_any_order() -> None:
    spill = Spill()
    values = [{"y": np.arange(24, dtype=np.float64).reshape(2, 3, 4), "status": "ok"},
              (np.ones(5, dtype=ml_dtypes.bfloat16), None, {"k": 1}),
              "text"]
    refs = [spill.put(v) for v in values]
    assert spill.spilled == sum(r.length for r in refs) > 0
    for ref, value in reversed(list(zip(refs, values, strict=True))):
        got = spill.get(ref)
        if isinstance(value, dict):
            assert got["status"] == "ok" and np.array_equal(got["y"], value["y"])
        elif isinstance(value, tuple):
            assert got[0].dtype == value[0].dtype and np.array_equal(got[0].astype(np.float32), np.ones(5))
            assert got[1:] == value[1:]
        else:
            assert got == value
    spill.close()


def test_a_value_that_will_not_pickle_stays_in_memory() -> None:
    spill = Spill()
    fn = lambda: 3  # noqa: E731 - a lambda does not pickle
    ref = spill.put({"f": fn})
    assert ref.offset < 0 and spill.get(ref)["f"] is fn and spill.spilled == 0


def test_lanes_writing_at_once_read_back_their_own() -> None:
    spill = Spill()
    refs: dict[int, object] = {}

    def lane(i: int) -> None:
        for j in range(50):
            refs[i * 100 + j] = spill.put(np.full(100 + j, i * 100 + j, dtype=np.int64))

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key, ref in refs.items():
        got = spill.get(ref)
        assert got.shape == (100 + key % 100,) and (got == key).all()
