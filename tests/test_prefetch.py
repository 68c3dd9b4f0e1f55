"""The controller's prefetch thread: order kept, errors raised in the consumer, bounded lead, cancel."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from harness.execution.prefetch import Prefetch


def test_items_come_in_order():
    assert [x for (x,) in Prefetch(range(200), lambda i: (i,))] == list(range(200))


def test_an_error_while_preparing_is_raised_in_the_consumer_after_the_good_items():
    def prepare(i):
        if i == 3:
            raise ValueError("bad case 3")
        return (i,)

    got = []
    with pytest.raises(ValueError, match="bad case 3"):
        for (i,) in Prefetch(range(10), prepare):
            got.append(i)
    assert got == [0, 1, 2]


def test_the_producer_stays_within_its_budgets():
    made = []
    lock = threading.Lock()

    def prepare(i):
        with lock:
            made.append(i)
        return (np.zeros(1000),)  # 8000 bytes each

    p = Prefetch(range(100), prepare, budget=8000 * 5, max_ahead=50)
    time.sleep(0.3)
    assert len(made) <= 6  # five within the byte budget, plus the one waiting for room
    p = Prefetch(range(100), lambda i: (i,), max_ahead=4)
    time.sleep(0.3)
    assert len(p.items) == 4
    p.cancel()
    p.thread.join(1.0)
    assert not p.thread.is_alive()


def test_stopping_early_stops_the_producer():
    drawn = []

    def source():
        for i in range(10**6):
            drawn.append(i)
            yield i

    p = Prefetch(source(), lambda i: (i,), max_ahead=8)
    for (i,) in p:
        if i == 20:
            break
    p.thread.join(1.0)
    assert not p.thread.is_alive() and len(drawn) <= 20 + 8 + 2
