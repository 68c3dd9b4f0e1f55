"""The fuzz's pace and default relations, without a framework: a target far slower than the reference (the cost of
the cheapest third of the targets) runs the share of the cases pace.py's rule gives (SLOW_FACTOR x reference / its
cost), spread evenly; the cheap ones run all; a
neighbour runs on the targets that failed on its anchor; the default subnormal relation takes a seeded share of the
cases, the same ones on every target."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from harness.commands.fuzz.campaign import DEFAULT_RELATIONS, RELATION_SHARE, FuzzUsage, relation_plan
from harness.commands.fuzz.gen import config_at
from harness.commands.fuzz.pace import BANK, MIN_PACED_S, SLOW_FACTOR, WARMUP, Pace, pairs, reference
from harness.execution.records import Record
from harness.model.case import FLOAT_DTYPES

COSTS = {"eager_a": 0.06, "eager_b": 0.08, "eager_c": 0.1, "compiler": 2.0}  # seconds per case
# of the four costs, the one at the 30% quantile is the cheapest, 0.06 s: the compiler's share is 2 x 0.06 / 2.0
SHARE = SLOW_FACTOR * 0.06 / 2.0


def test_the_reference_is_the_cheapest_third() -> None:
    assert reference(list(COSTS.values())) == 0.06
    costs = [0.002, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0]  # index int(0.3 x 10) = 3
    assert reference(costs) == 0.02 and reference(list(reversed(costs))) == 0.02


def _record(backend: str, case_id: str, seconds: float, output: str = "out") -> Record:
    return Record(case_id, "f.yaml", "conv2d", {}, backend, "1", "cpu", "float32", "pass", output=output,
                  duration_s=seconds)


def _drive(pace: Pace, cases: int, costs: dict[str, float]) -> dict[str, list[int]]:
    """Each case offered to every target; a chosen one reports its cost at once."""
    ran: dict[str, list[int]] = {b: [] for b in costs}
    base = config_at(1, 0, invalid_rate=0.0).case
    assert base is not None
    for i in range(cases):
        case_id = f"c{i}"
        for b, cost in costs.items():
            if pace.select(b, dataclasses.replace(base, id=case_id)):
                ran[b].append(i)
                pace.record(_record(b, case_id, cost))
    return ran


def test_a_slow_target_runs_its_share_evenly_and_cheap_ones_run_all() -> None:
    pace = Pace(list(COSTS))
    ran = _drive(pace, 200, COSTS)
    assert all(len(ran[b]) == 200 for b in ("eager_a", "eager_b", "eager_c"))
    # the compiler runs SHARE of the cases after its warm-up (less the credits it banks, at most BANK, while it waits for a case with an unseen pair of traits: here
    # every case is the same one, so it runs once its bank is full)
    expected = WARMUP + (200 - WARMUP) * SHARE
    assert expected - BANK - 2 <= len(ran["compiler"]) <= expected + 2, (len(ran["compiler"]), expected)
    gaps = [b - a for a, b in zip(ran["compiler"][WARMUP + 1:], ran["compiler"][WARMUP + 2:])]
    assert max(gaps) - min(gaps) <= 1  # evenly spread, not bunched
    summary = pace.summary()
    assert summary["compiler"]["cases"] == len(ran["compiler"])
    assert summary["compiler"]["cases"] + summary["compiler"]["left_out"] == 200


def test_a_slow_target_spends_its_share_on_unseen_pairs_of_traits() -> None:
    """Over varied generated cases, the slow target runs about its share, and the cases it runs cover more
    (trait, trait) pairs than every k-th case would (seed 3: 588 pairs against 489)."""
    configs = [c.case for c in (config_at(3, i, invalid_rate=0.3) for i in range(300)) if c.case is not None]
    pace = Pace(list(COSTS))
    ran: list[int] = []
    for i, case in enumerate(configs):
        for b, cost in COSTS.items():
            if pace.select(b, case):
                pace.record(_record(b, case.id, cost))
                if b == "compiler":
                    ran.append(i)
    expected = WARMUP + (len(configs) - WARMUP) * SHARE
    assert expected - BANK - 2 <= len(ran) <= expected + 2, (len(ran), expected)
    step = len(configs) / len(ran)
    even = [int(j * step) for j in range(len(ran))]
    covered = set().union(*(pairs(configs[i]) for i in ran))
    covered_evenly = set().union(*(pairs(configs[i]) for i in even))
    assert len(covered) > len(covered_evenly), (len(covered), len(covered_evenly))


def test_costs_under_the_floor_never_hold_a_target_back() -> None:
    tiny = {"a": 0.0, "b": MIN_PACED_S / 100, "c": MIN_PACED_S / 2}  # c is 50 times b, all below the floor
    ran = _drive(Pace(list(tiny)), 50, tiny)
    assert all(len(v) == 50 for v in ran.values())


def test_a_neighbour_runs_where_its_anchor_failed() -> None:
    pace = Pace(list(COSTS), pinned=lambda case_id: {"compiler"} if case_id.endswith("_n0") else ())
    _drive(pace, 40, COSTS)  # the compiler's credit is spent: it runs about one case in seventeen now
    case = config_at(1, 0, invalid_rate=0.0).case
    assert case is not None
    neighbour = dataclasses.replace(case, id="fuzz_1_n0")
    other = dataclasses.replace(case, id="fuzz_1_7")
    assert pace.select("compiler", neighbour)
    assert not pace.select("compiler", other)


def test_default_relations_a_seeded_share_the_same_on_every_target() -> None:
    args = argparse.Namespace(relations=None, seed=4)
    plan = relation_plan(args)
    assert plan is not None and plan.names == DEFAULT_RELATIONS and plan.chosen is not None
    cases = [c.case for c in (config_at(4, i, invalid_rate=0.0) for i in range(400))]
    chosen = [c for c in cases if plan.chosen("torch", c)]
    floats = [c for c in cases if c.dtype in FLOAT_DTYPES]
    firsts = {c.dtype: c for c in reversed(floats)}  # each float dtype's first case
    assert set(firsts.values()) <= set(chosen)
    rest = [c for c in cases if c not in firsts.values()]
    assert abs(sum(c in chosen for c in rest) / len(rest) - RELATION_SHARE) < 0.05
    assert chosen == [c for c in cases if plan.chosen("iree", c)]
    again = relation_plan(args)
    assert chosen == [c for c in cases if again.chosen("torch", c)]  # seeded
    late = relation_plan(args)  # a target that runs only the cases after the first hundred: its own first ones
    late_firsts = {c.dtype: c for c in reversed(floats[next(i for i, c in enumerate(floats) if c in cases[100:]):])}
    assert set(late_firsts.values()) <= {c for c in cases[100:] if late.chosen("executorch", c)}
    assert relation_plan(argparse.Namespace(relations="none", seed=4)) is None
    every = relation_plan(argparse.Namespace(relations="subnormal,batch", seed=4))
    assert every is not None and every.chosen is None and set(every.names) == {"subnormal", "batch"}
    with pytest.raises(FuzzUsage):
        relation_plan(argparse.Namespace(relations="nope", seed=4))


def test_a_target_that_builds_per_case_waits_for_its_first_costs() -> None:
    """Before any result is in (the first builds still running), a `slow` target runs its first WARMUP cases only;
    the others run all."""
    pace = Pace(["eager", "compiler"], slow=["compiler"])
    base = config_at(1, 0, invalid_rate=0.0).case
    assert base is not None
    picked = {b: [i for i in range(12) if pace.select(b, dataclasses.replace(base, id=f"c{i}"))]
              for b in ("eager", "compiler")}
    assert picked == {"eager": list(range(12)), "compiler": list(range(WARMUP))}
    for i in range(WARMUP):
        pace.record(_record("compiler", f"c{i}", 0.09))
        pace.record(_record("eager", f"c{i}", 0.09))
    assert pace.select("compiler", dataclasses.replace(base, id="c12"))  # as cheap as the other: every case again


def test_the_help_says_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.commands.cli import main

    with pytest.raises(SystemExit) as done:
        main(["fuzz", "--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
    assert "subnormal" in out and f"{round(RELATION_SHARE * 100)}% of the cases" in out and "twice the reference" in out


def test_the_backlog_is_what_the_busiest_target_still_has_to_run() -> None:
    """Pace.backlog, what ends the fuzz's draws before --time: (cases given without a result + 1) x cost, the
    largest over the targets; 0 before any cost is known."""
    pace = Pace(["eager", "compiler"])
    assert pace.backlog() == 0.0
    base = config_at(1, 0, invalid_rate=0.0).case
    assert base is not None
    for i in range(WARMUP):
        for b, cost in (("eager", 0.01), ("compiler", 2.0)):
            assert pace.select(b, dataclasses.replace(base, id=f"c{i}"))
            pace.record(_record(b, f"c{i}", cost))
    assert pace.backlog() == pytest.approx(2.0)  # nothing in flight: the next case on the compiler
    pinned = Pace(["eager", "compiler"], pinned=lambda case_id: {"compiler"})  # every case runs on the compiler
    for i in range(WARMUP + 3):
        for b in ("eager", "compiler"):
            pinned.select(b, dataclasses.replace(base, id=f"c{i}"))
    for i in range(WARMUP):
        pinned.record(_record("compiler", f"c{i}", 2.0))
        pinned.record(_record("eager", f"c{i}", 0.01))
    assert pinned.backlog() == pytest.approx((3 + 1) * 2.0)  # three handed out without a result, and the next


def test_a_target_that_refuses_most_cases_is_paced_by_what_a_drawn_case_costs_it() -> None:
    """A target that gives back nine cases in ten `unsupported` in milliseconds and runs the tenth in 0.06 s costs
    about 0.009 s a drawn case: under twice the reference, so it runs every case (the quantized paths on a float
    case); the summary counts the unsupported ones apart."""
    costs = {"eager_a": 0.01, "eager_b": 0.012, "eager_c": 0.015, "quant": 0.0}
    base = config_at(1, 0, invalid_rate=0.0).case
    assert base is not None
    pace = Pace(list(costs))
    ran = 0
    for i in range(300):
        case_id = f"c{i}"
        for b, cost in costs.items():
            if not pace.select(b, dataclasses.replace(base, id=case_id)):
                continue
            if b != "quant":
                pace.record(_record(b, case_id, cost))
            elif i % 10:
                pace.record(dataclasses.replace(_record(b, case_id, 0.003), status="unsupported"))
            else:
                ran += 1
                pace.record(_record(b, case_id, 0.06))
    summary = pace.summary()["quant"]
    assert summary["cases"] == 300 and summary["left_out"] == 0 and summary["unsupported"] == 270 and ran == 30
    assert pace.cost("quant") == pytest.approx((270 * 0.003 + 30 * 0.06) / 300)


def test_a_hang_is_judged_by_the_target_s_own_cost() -> None:
    """A case may take --timeout before a target's cost is known; after it, HANG_FACTOR x its cost per case, at
    least HANG_FLOOR_S and at most --timeout."""
    from harness.commands.fuzz.pace import HANG_FACTOR, HANG_FLOOR_S

    pace = Pace(["eager", "compiler"])
    assert pace.timeout("eager", 30.0) == 30.0
    for i in range(WARMUP):
        pace.record(_record("eager", f"c{i}", 0.01))
        pace.record(_record("compiler", f"c{i}", 1.2))
    assert pace.timeout("eager", 30.0) == HANG_FLOOR_S
    assert pace.timeout("compiler", 60.0) == pytest.approx(HANG_FACTOR * 1.2)
    assert pace.timeout("compiler", 5.0) == 5.0


def test_a_target_that_builds_per_case_keeps_the_whole_timeout() -> None:
    """Its first results may be batched members or refusals in milliseconds; the next build takes seconds, and a
    limit of HANG_FACTOR x that mean would kill it as a hang."""
    pace = Pace(["eager", "builder"], slow=["builder"])
    for i in range(WARMUP):
        pace.record(_record("eager", f"c{i}", 0.01))
        pace.record(_record("builder", f"c{i}", 0.01))
    assert pace.cost("builder") == pytest.approx(0.01)
    assert pace.timeout("builder", 30.0) == 30.0 and pace.timeout("eager", 30.0) < 30.0


def test_a_target_that_refuses_invalid_cases_cheaply_runs_every_one() -> None:
    """A compiler that builds a valid case in 2 s and refuses an invalid one in 10 ms (ExecuTorch: 4.3 s against
    0.019 s, pace.py's doc) runs every invalid case; of the valid ones, the share its cost over both kinds gives:
    at least what 2 s a case would, at most what its final cost over both would."""
    costs = {**COSTS, "compiler": 2.0}
    configs = [c.case for c in (config_at(5, i, invalid_rate=0.3) for i in range(300)) if c.case is not None]
    pace = Pace(list(costs))
    ran = {True: 0, False: 0}
    for case in configs:
        invalid = case.expect == "invalid"
        for b, cost in costs.items():
            if pace.select(b, case):
                seconds = 0.01 if (b == "compiler" and invalid) else cost
                rec = _record(b, case.id, seconds)
                rec.params = {"expect": "invalid"} if invalid else {}
                pace.record(rec)
                if b == "compiler":
                    ran[invalid] += 1
    n_invalid = sum(c.expect == "invalid" for c in configs)
    assert n_invalid >= 50 and ran[True] >= n_invalid - WARMUP, (ran, n_invalid)
    n_valid = len(configs) - n_invalid
    mixed = (2.0 * ran[False] + 0.01 * ran[True]) / (ran[False] + ran[True])
    low, high = n_valid * SHARE, n_valid * SLOW_FACTOR * 0.06 / mixed
    assert low - BANK - WARMUP - 2 <= ran[False] <= high + WARMUP + 2, (ran, low, high)
    assert pace.summary()["compiler"]["s_per_invalid_case"] == 0.01
