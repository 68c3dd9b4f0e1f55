"""The fuzz generator: deterministic, schema-valid, covering the case space and its corners,
and producing every invalid class the validator knows (each one flagged by it)."""

from __future__ import annotations

import json
from fnmatch import fnmatch
from pathlib import Path

import pytest

from harness.commands.fuzz.gen import INVALID_CLASSES, SCHEMA_INVALID_CLASSES, Config, config_at, generate
from harness.model.case import DATA_KINDS, FLOAT_DTYPES, LAYOUTS, OPS, QUANT_DTYPES, op_is_transpose
from harness.model.loader import load_file
from harness.model.schema import validate_fields
from harness.model.validity import canonical_case
from harness.model.yamlmap import InputError

# under `make test` (--dist loadgroup) one xdist process runs this module: its module fixture is paid once
pytestmark = pytest.mark.xdist_group("test_fuzz_gen")

N = 600


@pytest.fixture(scope="module")
def configs() -> list[Config]:
    gen = generate(11, invalid_rate=0.3)
    return [next(gen) for _ in range(N)]


def _dims(v, rank: int) -> list:
    return v if isinstance(v, list) else [v] * rank


def test_same_seed_same_configs(configs: list[Config]) -> None:
    again = generate(11, invalid_rate=0.3)
    assert [next(again).fields for _ in range(N)] == [c.fields for c in configs]
    assert config_at(11, 123, invalid_rate=0.3).fields == configs[123].fields  # each one alone, too
    other = generate(12, invalid_rate=0.3)
    assert [next(other).fields for _ in range(20)] != [c.fields for c in configs[:20]]


def test_every_config_loads_through_the_normal_loader(configs: list[Config], tmp_path: Path) -> None:
    runnable = [c for c in configs if c.case is not None]
    path = tmp_path / "fuzz.yaml"
    path.write_text("cases:\n" + "".join(f"  - {json.dumps(c.fields)}\n" for c in runnable), encoding="utf-8")
    loaded = load_file(path)
    assert [c.id for c in loaded] == [c.case.id for c in runnable]
    assert [c.params() for c in loaded] == [c.case.params() for c in runnable]
    assert all((c.expect == "invalid") == (c.geometry is None) for c in loaded)


def test_covers_the_case_space(configs: list[Config]) -> None:
    valid = [c for c in configs if c.kind == "valid"]
    seen = {k: {c.fields.get(k) for c in valid} for k in ("op", "dtype", "layout", "data")}
    assert seen["op"] == set(OPS) and seen["dtype"] == set(FLOAT_DTYPES) | set(QUANT_DTYPES)
    assert seen["layout"] == set(LAYOUTS) and seen["data"] == set(DATA_KINDS) | {None}  # quantized: no data kind
    quant = [c for c in valid if c.fields["dtype"] in QUANT_DTYPES]
    assert 0.08 <= len(quant) / len(valid) <= 0.22  # QUANT_SHARE 0.15
    assert {(c.case.quant.per_channel, c.case.quant.range) for c in quant} == {
        (p, r) for p in (False, True) for r in ("full", "narrow")}
    assert {c.case.op for c in quant} == set(OPS) and not any(c.case.epilogue for c in quant)
    forms = {type(c.fields["padding"]).__name__ if not isinstance(c.fields["padding"], list)
             else ("pairs" if isinstance(c.fields["padding"][0], list) else "per_dim") for c in valid}
    modes = {c.fields["padding"] for c in valid if isinstance(c.fields["padding"], str)}
    assert forms == {"int", "str", "per_dim", "pairs"} and modes == {"same", "valid"}
    assert {c.fields["batch"] for c in valid} >= {1, 2}
    assert any(c.fields["bias"] for c in valid) and any(not c.fields["bias"] for c in valid)


def _corners(c: Config) -> set[str]:
    """The boundary features of one valid config, computed from its canonical case."""
    case, out = c.case, set()
    assert case is not None
    for n, k, s, d, op in zip(case.input_size, case.kernel_size, case.stride, case.dilation, case.output_padding):
        out |= {name for name, hit in (
            ("L % s != 0", n % s != 0), ("k < s", k < s), ("d > s", d > s), ("k > L", k > n),
            ("size 1", n == 1 or k == 1), ("k = 7", k == 7),
            ("output_padding at max", case.transpose and max(s, d) > 1 and op == max(s, d) - 1)) if hit}
    if case.padding == "same" and any((a + b) % 2 for a, b in case.geometry.pads):
        out.add("odd SAME total")
    if case.groups == case.in_channels > 1:
        out.add("groups == channels")
    if case.groups > 1:
        out.add("groups")
    return out


def test_biased_to_the_corners(configs: list[Config]) -> None:
    valid = [c for c in configs if c.kind == "valid"]
    counts = {}
    for c in valid:
        for corner in _corners(c):
            counts[corner] = counts.get(corner, 0) + 1
    for corner in ("L % s != 0", "k < s", "d > s", "k > L", "size 1", "k = 7", "output_padding at max",
                   "odd SAME total", "groups == channels", "groups"):
        assert counts.get(corner, 0) >= len(valid) // 40, (corner, counts)


PROBLEM_FIELD = {"kernel_reach": "output size", "empty_output": "output size", "groups_not_dividing": "groups",
                 "output_padding_ge_max": "output_padding", "stride_nonpositive": "stride",
                 "dilation_nonpositive": "dilation", "groups_nonpositive": "groups", "negative_padding": "padding",
                 "mixed_dtypes": "*_dtype"}


def test_every_invalid_class_is_produced_and_flagged(configs: list[Config]) -> None:
    invalid = [c for c in configs if c.kind == "invalid"]
    assert {c.focus for c in invalid} == set(INVALID_CLASSES)
    for c in invalid:
        assert c.fields["expect"] == "invalid" and c.case is not None and c.case.geometry is None
        model, problem = validate_fields(c.fields)
        assert problem is None
        _, problems = canonical_case(model, c.fields["id"], "x.yaml", 1)
        assert any(fnmatch(f, PROBLEM_FIELD[c.focus]) for f, _ in problems), (c.fields, problems)
        if c.focus.startswith("output_padding"):
            assert op_is_transpose(c.fields["op"])


def test_schema_invalid_classes_are_refused_by_the_loader(configs: list[Config], tmp_path: Path) -> None:
    refused = [c for c in configs if c.kind == "schema_invalid"]
    assert {c.focus for c in refused} == set(SCHEMA_INVALID_CLASSES)
    for c in refused[:12]:
        assert c.case is None and validate_fields(c.fields)[1] is not None
        path = tmp_path / f"{c.fields['id']}.yaml"
        path.write_text("cases:\n" + f"  - {json.dumps(c.fields)}\n", encoding="utf-8")
        with pytest.raises(InputError) as err:
            load_file(path)
        assert str(err.value).startswith(f"{path}:2: ") and "\n" not in str(err.value)


def test_invalid_rate_is_respected() -> None:
    gen = generate(5, invalid_rate=0.2)
    kinds = [next(gen).kind for _ in range(400)]
    share = sum(k != "valid" for k in kinds) / len(kinds)
    assert 0.13 < share < 0.27
    none = generate(5, invalid_rate=0.0)
    assert all(next(none).kind == "valid" for _ in range(100))


def _edge(c: Config) -> bool:
    """Whether a valid config of a boundary focus sits on the edge the focus names (gen.boundary)."""
    from harness.model.features import derived_names

    case = c.case
    n = derived_names(case.params())
    axes = list(zip(case.input_size, case.kernel_size, case.stride, case.dilation, n["pad_before"], n["pad_after"],
                    case.output_padding, n["out_size"]))
    if c.focus == "out_one":
        return any(o == 1 for *_, o in axes)
    if c.focus == "pad_reach":
        return any(r > 0 and (pb in (r, r + 1) or pa in (r, r + 1))
                   for (_, k, _, d, pb, pa, _, _), r in zip(axes, n["reach"]))
    if c.focus == "outpad_stride":
        return not case.transpose or any(e > 0 and e in (s - 1, s) for _, _, s, _, _, _, e, _ in axes)
    if c.focus == "group_ratio":
        return case.groups > 1 and n["in_per_group"] != n["out_per_group"]
    if c.focus == "long_sum":
        return any(abs(n["acc_len"] - t) <= max(8, t // 2) for t in (8, 16, 32, 64, 128, 256))
    if c.focus == "channels_width":
        return case.out_channels == n["out_size"][-1] >= 2 and (case.bias or "shift" in case.epilogue)
    if c.focus == "padding_window":  # a window of padding only; transposed: a stride past the dilated kernel
        if case.transpose:
            return any(s > d * (k - 1) + 1 for _, k, s, d, *_ in axes)
        return any(not any(0 <= start + t * d < n_ for t in range(k))  # the window starting at `start` reads no input
                   for n_, k, s, d, pb, _, _, o in axes for start in (-pb, (o - 1) * s - pb))
    if c.focus == "one_padded":
        return any(n_ == 1 and pb + pa > 0 for n_, _, _, _, pb, pa, _, _ in axes)
    if c.focus == "one_by_one_stride":
        return all(k == 1 for k in case.kernel_size) and any(s > 1 and pb + pa > 0 for _, _, s, _, pb, pa, _, _ in axes)
    if c.focus == "epilogue_fold":
        return (len(case.epilogue) >= 2 and case.dtype not in ("uint8", "int8")
                and case.epilogue[0] not in ("residual",))
    return case.channels_last and 1 in (case.in_channels, case.out_channels)  # channels_last_one


def test_boundary_foci_sit_on_their_edges(configs: list[Config]) -> None:
    from harness.commands.fuzz.gen import BOUNDARY_FOCI

    for focus in (*BOUNDARY_FOCI, "epilogue_fold"):
        mine = [c for c in configs if c.kind == "valid" and c.focus == focus]
        assert len(mine) >= len(configs) // 60, focus
        on = sum(_edge(c) for c in mine)
        assert on >= 0.8 * len(mine), (focus, on, len(mine))


def test_one_padded_and_padding_window_reach_their_conjunctions() -> None:
    """A conv3d's one-padded axis is its depth half the time, and a share of them has one input channel, alone or
    per group; a forward padding-only window has another axis padded before as well about half the time. Each
    conjunction is what an entry of cases/known_issues.yaml turns on (a one-channel bfloat16 conv3d of depth one,
    an int8 padding-only last axis beside a padded one); drawn on 1 in 3 axes and 3 in 10 configs alone, a
    10-minute fuzz drew neither."""
    from harness.commands.fuzz.draw import Draw, per_dim_lists
    from harness.commands.fuzz.gen import valid_fields

    depth = one = total3 = 0
    for i in range(400):
        _, f = valid_fields(Draw(f"t:{i}"), "one_padded", "conv3d")
        f = per_dim_lists(f)
        total3 += 1
        depth += f["input_size"][0] == 1 and sum(f["padding"][0]) > 0
        one += f["in_channels"] == f.get("groups", 1)
    assert depth >= 0.45 * total3 and one >= 0.3 * total3, (depth, one, total3)
    beside = windows = 0
    for i in range(400):
        _, f = valid_fields(Draw(f"w:{i}"), "padding_window", "conv2d")
        f = per_dim_lists(f)
        windows += 1
        beside += sum(1 for p in f["padding"] if p[0] > 0) >= 2
    assert beside >= 0.35 * windows, (beside, windows)


def test_a_neighbour_changes_one_thing_and_stays_valid(configs: list[Config]) -> None:
    from harness.commands.fuzz.gen import per_dim_lists
    from harness.commands.fuzz.steer import near

    for c in [c for c in configs if c.kind == "valid"][:60]:
        n = near(c.fields, "valid", f"n_{c.fields['id']}")
        assert n is not None and n.case is not None and n.case.geometry is not None
        a, b = per_dim_lists(c.fields), per_dim_lists(n.fields)
        changed = {k for k in set(a) | set(b) if k not in ("id", "seed", "tags") and a.get(k) != b.get(k)}
        assert 1 <= len(changed) <= 2, changed  # one field (a padding form may take output_padding with it)


def test_a_neighbour_of_the_other_kind_says_what_it_is(tmp_path: Path) -> None:
    """`scope --check` asks for invalid neighbours of valid failures, and valid ones of invalid cases: each must
    carry the `expect` of what it is, or the written file holds a case the loader refuses (an output length of -1
    run as a valid case, which every target that rejects it turns into an unexplained result)."""
    from harness.commands.fuzz.steer import near

    valid = {"op": "conv2d", "batch": 1, "in_channels": 4, "out_channels": 1, "groups": 1, "input_size": [5, 5],
             "kernel_size": [2, 3], "stride": [1, 1], "dilation": [2, 3], "padding": [[0, 0], [0, 0]], "bias": True,
             "layout": "channels_first", "dtype": "float32", "data": "normal"}
    invalid = {**valid, "dilation": [3, 3], "expect": "invalid"}  # 5 - (3 * 2 + 1) + 1 = -1 on the last axis
    drawn = [near(valid, "invalid", f"scope_0_i{i}") for i in range(30)] + [near(invalid, "valid", f"scope_0_v{i}")
                                                                           for i in range(30)]
    drawn = [c for c in drawn if c is not None]
    assert {c.kind for c in drawn} == {"valid", "invalid"}
    for c in drawn:
        assert (c.fields.get("expect") == "invalid") == (c.kind == "invalid"), c.fields
    path = tmp_path / "cases.yaml"
    path.write_text("cases:\n" + "".join(f"  - {json.dumps(c.fields)}\n" for c in drawn))
    loaded = load_file(path)
    assert sorted(c.expect for c in loaded) == sorted(c.kind for c in drawn)


def test_no_neighbour_is_a_transposed_conv_whose_out_channels_groups_do_not_divide() -> None:
    """A forward conv with out_channels 3 and groups 2 is a fair invalid case; its transposed twin is not one a
    framework can be handed (the weight is (C_in, C_out / groups, *k)), so the op move never makes it."""
    from harness.commands.fuzz.steer import near, stateable

    anchor = {"op": "conv3d", "batch": 1, "in_channels": 2, "out_channels": 3, "groups": 2, "input_size": [4, 4, 2],
              "kernel_size": [2, 3, 2], "stride": [1, 1, 1], "dilation": [1, 3, 1], "padding": "same", "bias": False,
              "layout": "channels_first", "dtype": "float32", "data": "normal", "expect": "invalid"}
    assert not stateable({**anchor, "op": "conv_transpose3d"}) and stateable(anchor)
    drawn = [near(anchor, "invalid", f"fuzz_0_n{i}") for i in range(80)]
    ops = {n.fields["op"] for n in drawn if n is not None}
    assert ops == {"conv3d"}, ops


def test_steer_draws_most_near_the_rarest_failure(configs: list[Config]) -> None:
    from collections import Counter

    from harness.commands.fuzz.steer import Steer

    valid = [c for c in configs if c.kind == "valid"]
    steer = Steer(seed=5)
    for c in valid[:10]:
        steer.feedback(c, "seen-often")
    steer.feedback(valid[10], "seen-once")
    for c in valid[:10]:  # the common kind again: each failure adds to its count, not a new anchor
        steer.feedback(c, "seen-often")
    drawn = Counter()
    for _ in range(12):
        with steer.lock:
            before = {a.fields["id"]: a.drawn for a in steer.anchors}
        steer.next()
        after = {a.fields["id"]: a.drawn for a in steer.anchors}
        drawn.update(k for k in after if after[k] != before[k])
    rare = drawn.pop(valid[10].fields["id"], 0)
    assert rare >= 4 and rare > 2 * max(drawn.values(), default=0), (rare, drawn)  # weight 1/1 against 1/20 each


def test_an_empty_output_is_one_axis_of_length_zero(configs: list[Config]) -> None:
    """The empty_output class: output length exactly 0 on one axis (the formula of ARCHITECTURE.md, by hand
    here), the other axes as drawn."""
    empty = [c.case for c in configs if c.focus == "empty_output"]
    assert len(empty) >= 10
    for case in empty:
        pads = [(0, 0)] * len(case.input_size) if case.padding == "valid" else case.padding
        lengths = []
        for n, k, s, d, (pb, pa), e in zip(case.input_size, case.kernel_size, case.stride, case.dilation, pads,
                                           case.output_padding):
            lengths.append((n - 1) * s - pb - pa + d * (k - 1) + e + 1 if case.transpose
                           else (n + pb + pa - d * (k - 1) - 1) // s + 1)
        assert 0 in lengths, (case.id, lengths)



def test_half_the_invalid_configs_are_a_plain_conv_with_one_thing_wrong(configs: list[Config]) -> None:
    """About CLEAN_INVALID_SHARE of the invalid configs come from a plain base (float32/float64 or per-tensor
    quantized, channels-first, the same pad both sides, no epilogue), and the loader finds one problem in nearly
    all of them: what a framework refuses them for is that one thing."""
    from harness.commands.fuzz.gen import CLEAN_INVALID_SHARE

    invalid = [c for c in configs if c.kind == "invalid"]

    def plain(c: Config) -> bool:
        f, case = c.fields, c.case
        assert case is not None
        quant_ok = f["dtype"] not in QUANT_DTYPES or not f["quant"]["per_channel"]
        float_ok = f["dtype"] in ("float32", "float64", *QUANT_DTYPES) and "epilogue" not in f
        pads = case.padding if isinstance(case.padding, str) else [a == b for a, b in case.padding]
        return (quant_ok and float_ok and f["layout"] == "channels_first"
                and (isinstance(pads, str) or all(pads) or c.focus == "negative_padding" or c.focus == "empty_output"))

    share = sum(map(plain, invalid)) / len(invalid)
    assert CLEAN_INVALID_SHARE - 0.12 <= share <= CLEAN_INVALID_SHARE + 0.3, share  # drawn plain ones, and some by chance
    one = [c for c in invalid if plain(c)]
    problems = [len(canonical_case(validate_fields(c.fields)[0], c.fields["id"], "f.yaml", 0)[1]) for c in one]
    assert sum(n == 1 for n in problems) >= 0.9 * len(problems)


def test_output_padding_reaches_the_stride_and_above_where_dilation_allows(configs: list[Config]) -> None:
    """The outpad_stride boundary: output_padding of stride - 1, of stride, and above the stride (valid where the
    dilation is larger still), each present among the valid transposed configs."""
    seen = set()
    for c in configs:
        case = c.case
        if c.kind != "valid" or case is None or not op_is_transpose(case.op) or isinstance(case.padding, str):
            continue
        for e, s, d in zip(case.output_padding, case.stride, case.dilation):
            if e and e == s - 1:
                seen.add("stride-1")
            elif e == s and d > s:
                seen.add("stride")
            elif e > s and d > e:
                seen.add("above")
    assert seen == {"stride-1", "stride", "above"}, seen


def test_gradient_flags_land_on_configs_that_judge_gradients() -> None:
    """`gradients: true` only where the case judges a gradient (an epilogue, an int8 dtype or an invalid case
    judges its forward output alone: Case.gradient_outputs), on the given share of those: with share 1 every
    valid config that can judge one does, with share 0 none does."""
    every = [config_at(5, i, invalid_rate=0.3, gradient_share=1.0) for i in range(200)]
    none = [config_at(5, i, invalid_rate=0.3, gradient_share=0.0) for i in range(200)]
    flagged = [c for c in every if c.case is not None and c.case.gradients]
    assert flagged and all(c.case.gradient_outputs for c in flagged)
    assert not any(c.case is not None and c.case.gradients for c in none)
    # the flag changes nothing else: the same configs, with or without it
    assert [{k: v for k, v in c.fields.items() if k != "gradients"} for c in every] == [c.fields for c in none]
    for c in every:  # a valid config left unflagged at share 1 is one that cannot judge a gradient
        if c.kind == "valid" and not c.case.gradients:
            assert c.case.epilogue or c.case.quantized or c.case.unbatched
