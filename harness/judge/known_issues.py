"""cases/known_issues.yaml: expected divergences as data, matched by selectors.

Entry fields: id, backend (name, glob or list), device (optional), cases (a
selector on op, case id, file, tags and canonical parameters), status (one or a
list), reason, link (the upstream report, or "none found ..."); optional upstream
bookkeeping: tracker (the GitHub owner/repo a report belongs to), checked ({date,
versions}: when the entry was last re-measured and its tracker searched) and fixed_in
(the release that fixes it); and the upstream report's fields kind, root, component, searched, latest
and ask (harness/judge/entry_upstream.py). A selector value is a scalar (per-dimension parameters match
when every dimension equals it), a list of alternatives, a glob for strings, or a
{min, max} range (per-dimension parameters match when any dimension is in range).
`case` globs treat brackets literally (swept ids contain them); only * and ? are
wildcards. `when` is an expression over the parameters (see predicate.py), for
relations a value cannot express. `output` selects what is judged: `out` (the forward
result, the default when absent), `grad_input`, `grad_weight`, `grad_bias`, a list or a glob
(`grad_*`, `*`).

`host` selects on host facts (harness/execution/host.py FACTS): the machine's CPU and what the
target's framework decided from it, read live in its worker, e.g. `host: {tf_onednn:
false}` or `host: {cpu_flags: {lacks: avx512_bf16}}`. A value is a scalar, a list of
alternatives, {min, max}, or {has: X} / {lacks: X} for the list-valued cpu_flags. An
entry with `host` never matches a target that does not report the fact.

`max_rel_err` (optional) bounds what the entry explains: a mismatch whose relative error (the record's
rel_err, max |err| / max |ref|) is larger is not this entry's, and the lookup goes on to the entries
after it. For a precise mechanism (a constant rounded to float32 is off by at most 2^-24 of it), so that
a gross error on the same cases is reported, not hidden behind the small one.

An `expect: invalid` case is matched only by entries that can explain one of its outcomes
(accepted_invalid, crash, timeout, error: INVALID_OUTCOMES): its correct refusal is a pass, so an entry
for a refusal or a wrong value of valid cases would only report "known issue now passes" on it.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.execution.host import FACTS
from harness.execution.records import STATUSES
from harness.judge.entry_upstream import KINDS, UPSTREAM_FIELDS, Component, Latest, load_upstream_fields
from harness.model.case import Case
from harness.model.features import DERIVED_NAMES as FEATURE_NAMES
from harness.model.features import derived_names as feature_names
from harness.model.loader import known_issues_dir
from harness.model.predicate import PredicateError, compile_predicate, evaluate
from harness.model.schema import CASE_FIELDS
from harness.model.yamlmap import InputError, LineList, LineMap, load_yaml, parsed_once
from harness.numerics.bound import accumulation_length

ENTRY_FIELDS = ("id", "backend", "device", "host", "cases", "status", "max_rel_err", "reason", "link",
                "tracker", "checked", "fixed_in", *UPSTREAM_FIELDS)
SELECTOR_FIELDS = (*CASE_FIELDS, "file", "case", "when", "output", "path")
INVALID_OUTCOMES = frozenset({"accepted_invalid", "crash", "timeout", "error"})  # what an invalid case can fail with


def _as_list(v: Any) -> list:
    return list(v) if isinstance(v, list) else [v]


def _match_value(want: Any, have: Any) -> bool:
    if isinstance(want, dict) and isinstance(have, dict):  # a sub-mapping (quant: {range: full}): each key
        return all(_match_value(v, have.get(key)) for key, v in want.items())
    if isinstance(want, dict):
        nums = [x for x in (have if isinstance(have, list) else [have]) for x in (x if isinstance(x, list) else [x])]
        lo, hi = want.get("min", float("-inf")), want.get("max", float("inf"))
        return any(isinstance(n, (int, float)) and lo <= n <= hi for n in nums)
    if isinstance(want, list):
        return any(_match_value(w, have) for w in want)
    if isinstance(have, list) and not isinstance(want, list):
        flat = [x for p in have for x in (p if isinstance(p, list) else [p])]
        return bool(flat) and all(x == want for x in flat)
    if isinstance(want, str) and isinstance(have, str):
        return fnmatch.fnmatchcase(have, want)
    return want == have


def _match_fact(want: Any, have: Any) -> bool:
    if isinstance(want, dict) and ("has" in want or "lacks" in want):
        flags = set(have) if isinstance(have, list) else {have}
        return set(_as_list(want.get("has", []))) <= flags and not set(_as_list(want.get("lacks", []))) & flags
    if isinstance(have, list):  # a list fact against a scalar: it must contain it
        return any(_match_fact(want, h) for h in have)
    return _match_value(want, have)


def _literal_glob(text: str, pattern: str) -> bool:
    """Glob with only * and ? special: case ids carry brackets, which fnmatch would misread."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text) is not None


@dataclass
class KnownIssue:
    id: str
    backend: list[str]
    device: list[str]
    cases: dict[str, Any]
    status: list[str]
    reason: str
    link: str
    when: Any = None  # compiled predicate, or None
    host: dict[str, Any] = field(default_factory=dict)
    max_rel_err: float | None = None  # the largest mismatch (rel_err) the entry explains; None: any
    tracker: str = ""     # where an upstream report belongs: a GitHub owner/repo (pytorch/pytorch)
    checked: dict[str, str] = field(default_factory=dict)  # {date, versions}: when the entry was last re-measured
    fixed_in: str = ""    # the release that fixes it upstream, where one does ("torch 2.14")
    source: str = ""      # the file the entry comes from
    kind: str = ""        # wrong-value | crash | valid-refused | invalid-accepted | by-design-(un)documented
    root: str = ""        # the root cause's id: entries sharing it make one upstream report (default: own id)
    component: Component | None = None  # the vendored component the defect lives in, and its tracker
    searched: tuple[str, ...] = ()      # "owner/repo: what was searched", as of checked.date
    latest: Latest | None = None        # the snippet against the newest release on the package index
    ask: str = ""         # what the report asks for, when not the kind's default

    def __post_init__(self) -> None:
        self.root = self.root or self.id

    @property
    def asks(self) -> str:
        """What the upstream report asks for: the entry's `ask`, else the kind's default (entry_upstream.KINDS)."""
        return self.ask or KINDS.get(self.kind, "")

    @property
    def upstream_state(self) -> str:
        """none found / reported / fixed in <release>: what upstream knows, as the entry says."""
        if self.fixed_in:
            return f"fixed in {self.fixed_in}"
        if self.link.lower().startswith("none found") or not re.search(r"https?://", self.link):
            return "none found"  # also "upstream report to file (...)", "no upstream issue found"
        return "reported"

    def explains(self, rel_err: float | None) -> bool:
        """Whether a result with this relative error is within the entry's reach (None: no values were compared,
        e.g. a wrong dtype; inf: a non-finite output, which no max_rel_err entry explains)."""
        return self.max_rel_err is None or rel_err is None or rel_err <= self.max_rel_err

    def host_matches(self, facts: dict[str, Any]) -> bool:
        return all(key in facts and _match_fact(want, facts[key]) for key, want in self.host.items())

    def matches(self, case: Case, backend: str, device: str, host: dict[str, Any] | None = None,
                output: str | None = "out", params: dict[str, Any] | None = None, path: str | None = None) -> bool:
        """`host`: the target's host facts; None means "any host" (collection, the stale check).
        `output`: what the record judges (out or a gradient); None means "any output".
        `params`: `case.params()` when the caller already has it (read only).
        `path`: the adapter's route the result took (Record.path, "" for its direct call); None means "any
        route" (before the run): a `path:` selector then does not decide, and `when` sees path None."""
        if output is not None and not _match_value(self.cases.get("output", "out"), output):
            return False
        if case.expect == "invalid" and not INVALID_OUTCOMES.intersection(self.status):
            return False  # nothing it predicts can happen to an invalid case (the module doc)
        if not any(fnmatch.fnmatchcase(backend, b) for b in self.backend):
            return False
        if self.device and device not in self.device:
            return False
        if host is not None and not self.host_matches(host):
            return False
        params = case.params() if params is None else params
        for key, want in self.cases.items():
            if key in ("when", "output") or (key == "path" and path is None):
                continue
            if key == "path":
                if not _match_value(want, path):
                    return False
                continue
            if key == "case":
                if not any(_literal_glob(case.id, w) for w in _as_list(want)):
                    return False
            elif key == "tags":
                if not set(_as_list(want)) <= set(case.tags):
                    return False
            elif not _match_value(want, Path(case.file).name if key == "file" else params.get(key)):
                return False
        # Last, so value selectors (op: conv3d) can guard it; an expression that fails on
        # this case (dilation[2] of a 1-D case) simply does not match it.
        if self.when is not None:
            try:
                return evaluate(self.when, {**params, **derived_names(case, output, params), "path": path})
            except Exception:  # noqa: BLE001 - any evaluation error means "not this case"
                return False
        return True


# what `when` sees beside the case's parameters: derived_names, and `path` (the adapter's route, Record.path)
DERIVED_NAMES = (*FEATURE_NAMES, "path")


def derived_names(case: Case, output: str | None, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Names `when` may use beside the parameters (harness/model/features.py: pads per axis, the reach of
    the dilated kernel, per-group channel counts, out_size, ...), with acc_len that of what is judged:
    K, the most terms summed into one element of `output` (harness/numerics/bound.py; the forward output
    when `output` is None). An `expect: invalid` case has no geometry: neither out_size nor acc_len
    exists, and an expression using one does not match it."""
    names = feature_names(case.params() if params is None else params)
    if case.geometry is None:
        names.pop("out_size", None)
        names.pop("acc_len", None)
    elif output not in (None, "out"):
        names["acc_len"] = accumulation_length(case, output)
    return names


class KnownIssues:
    def __init__(self, entries: list[KnownIssue]) -> None:
        self.entries = entries
        self._by_backend: dict[str, list[KnownIssue]] = {}

    def for_backend(self, backend: str) -> list[KnownIssue]:
        """The entries whose backend globs name `backend`, in file order (first match wins, see `match`):
        collection asks for thousands of (case, backend) pairs, each against a few entries, not all."""
        found = self._by_backend.get(backend)
        if found is None:
            found = self._by_backend[backend] = [
                e for e in self.entries if any(fnmatch.fnmatchcase(backend, b) for b in e.backend)]
        return found

    def match(self, case: Case, backend: str, device: str, host: dict[str, Any] | None = None,
              output: str = "out", rel_err: float | None = None,
              params: dict[str, Any] | None = None, path: str | None = None,
              status: str | None = None) -> KnownIssue | None:
        """The first entry that selects this result and, for a failing `status`, lists it (else the first that
        selects it: a pass keeps that one, whose "now passes" hint it is). `rel_err`: a mismatch's relative error
        (entries with a smaller max_rel_err are passed over); `params`: `case.params()` when the caller has it
        (read only); `path`: the route the adapter took (Record.path)."""
        params = case.params() if params is None else params  # once for every entry
        found = [e for e in self.for_backend(backend)
                 if e.explains(rel_err) and e.matches(case, backend, device, host, output, params, path)]
        return next((e for e in found if status in (None, "pass", *e.status)), found[0] if found else None)

    def candidates(self, case: Case, backend: str, device: str, output: str = "out") -> list[KnownIssue]:
        """Entries that match on some host: decided for this one once its facts are known."""
        params = case.params()
        return [e for e in self.for_backend(backend) if e.matches(case, backend, device, None, output, params)]

    @property
    def sources(self) -> list[str]:
        """The files the entries come from, in matching order."""
        return list(dict.fromkeys(e.source for e in self.entries))

    def stale(self, cases: list[Case], backends: list[str]) -> list[KnownIssue]:
        """Entries matching no case of the corpus on any backend they name: a typo, or a removed case.

        Judged against the whole corpus, not one run, so a smoke-only run does not cry wolf. Beyond its
        backend and device lists, an entry's match does not depend on which backend or device it is
        asked for, so each case is tried once, with the first backend and device the entry names.
        """
        out = []
        with_params = [(c, c.params()) for c in cases]
        for e in self.entries:
            names = [b for b in backends if any(fnmatch.fnmatchcase(b, p) for p in e.backend)]
            device = (e.device or ["cpu"])[0]
            if not names or not any(e.matches(c, names[0], device, None, None, p) for c, p in with_params):
                out.append(e)
        return out


# convdiff's own database: in the checkout (and an editable install), or where a wheel puts it (pyproject data-files)
_HERE = Path(__file__).resolve().parents[2] / "cases" / "known_issues.yaml"
_SHARED = Path(sys.prefix) / "share" / "convdiff" / "known_issues.yaml"


def project_known_issues() -> Path | None:
    """The path of convdiff's own known_issues.yaml, which applies to every run wherever its case files are."""
    return next((p for p in (_HERE, _SHARED) if p.exists()), None)


def layered(user_files: Iterable[str | Path], case_dirs: Iterable[str | Path],
            adapter_files: Iterable[Path | None] = ()) -> KnownIssues:
    """The known issues of a run, matched in this order (first match wins): the user's files (`--known-issues`,
    as given), then the files the run's adapters ship (Backend.known_issues_path()), then the known_issues.yaml
    nearest at or above each case directory when it is not convdiff's, then convdiff's own. Each entry keeps
    its file (KnownIssue.source); a missing user file is an input error."""
    files: list[Path] = []
    for f in user_files:
        if not Path(f).is_file():
            raise InputError(str(f), 0, "known-issues", "no such file")
        files.append(Path(f))
    for f in adapter_files:  # declared by an adapter (Backend.known_issues_file): absent is a packaging mistake
        if f is not None and not f.is_file():  # that would turn all its known issues into unexpected ones
            raise InputError(str(f), 0, "known_issues_file", "no such file (declared by the adapter: package it)")
        files += [f] if f is not None else []
    project = project_known_issues()
    for d in case_dirs:
        near = known_issues_dir(d) / "known_issues.yaml"
        if near.exists():
            files.append(near)
    if project is not None:
        files.append(project)
    seen: set[Path] = set()
    entries: list[KnownIssue] = []
    for f in files:
        if f.resolve() not in seen:
            seen.add(f.resolve())
            entries += load_known_issues(f).entries
    return KnownIssues(entries)


def shown(path: str | Path) -> str:
    """A known-issues file as messages name it: relative to the working directory when under it."""
    p = Path(path).resolve()
    return str(p.relative_to(Path.cwd())) if p.is_relative_to(Path.cwd()) else str(path)


def load_known_issues(path: str | Path) -> KnownIssues:
    path = str(path)
    if not Path(path).exists():
        return KnownIssues([])
    return KnownIssues(list(parsed_once(path, "known_issues", _entries)))


def _entries(path: str, text: str) -> tuple[KnownIssue, ...]:
    raw_list = issue_list(path, load_yaml(path, text))
    entries: list[KnownIssue] = []
    for raw, line in zip(raw_list, raw_list.lines):
        entry = parse_entry(path, raw, line)
        if any(e.id == entry.id for e in entries):
            raise InputError(path, raw.lines["id"], "id", f"duplicate id '{raw['id']}'")
        entries.append(entry)
    return tuple(entries)


def issue_list(path: str, doc: Any) -> LineList:
    """The `issues:` list of a parsed known-issues file (its entries unchecked)."""
    if not isinstance(doc, LineMap) or not isinstance(doc.get("issues", []), list):
        raise InputError(path, getattr(doc, "line", 1), "issues", "must be a mapping with an 'issues' list")
    return doc.get("issues") or LineList(1)


def parse_entry(path: str, raw: Any, line: int) -> KnownIssue:
    """One entry of a known-issues file, checked field by field; InputError on its first problem."""
    if not isinstance(raw, LineMap):
        raise InputError(path, line, "issues", "each entry must be a mapping")
    for key in raw:
        if key not in ENTRY_FIELDS:
            raise InputError(path, raw.lines[key], key, "unknown field")
    for key in ("id", "backend", "status", "reason", "link"):
        if not raw.get(key):
            raise InputError(path, line, key, "required field is missing")
    cases = raw.get("cases") or {}
    if not isinstance(cases, dict):
        raise InputError(path, raw.lines["cases"], "cases", "must be a mapping (selector)")
    for key in cases:
        if key not in SELECTOR_FIELDS:
            raise InputError(path, cases.lines[key], f"cases.{key}", "unknown selector field")
    statuses = [str(s) for s in _as_list(raw["status"])]
    for s in statuses:
        if s not in STATUSES:
            raise InputError(path, raw.lines["status"], "status", f"unknown status '{s}'")
    when = None
    if "when" in cases:
        try:
            when = compile_predicate(str(cases["when"]))
        except PredicateError as exc:
            raise InputError(path, cases.lines["when"], "cases.when", str(exc)) from None
    host = _load_host(path, raw)
    max_rel_err = raw.get("max_rel_err")
    if max_rel_err is not None and (isinstance(max_rel_err, bool) or not isinstance(max_rel_err, (int, float))
                                    or not max_rel_err > 0):
        raise InputError(path, raw.lines["max_rel_err"], "max_rel_err", "must be a number > 0")
    tracker, checked, fixed_in = _load_upstream(path, raw)
    return KnownIssue(
        id=str(raw["id"]), backend=[str(b) for b in _as_list(raw["backend"])],
        device=[str(d) for d in _as_list(raw.get("device") or [])], cases=dict(cases),
        status=statuses, reason=str(raw["reason"]), link=str(raw["link"]), when=when, host=host,
        max_rel_err=None if max_rel_err is None else float(max_rel_err),
        tracker=tracker, checked=checked, fixed_in=fixed_in, source=path, **load_upstream_fields(path, raw),
    )


def _load_upstream(path: str, raw: LineMap) -> tuple[str, dict[str, str], str]:
    """tracker (owner/repo), checked ({date, versions}) and fixed_in, each optional."""
    tracker = raw.get("tracker") or ""
    if tracker and not re.fullmatch(r"[\w.-]+/[\w.-]+", str(tracker)):
        raise InputError(path, raw.lines["tracker"], "tracker", "must be a GitHub owner/repo, e.g. pytorch/pytorch")
    checked = raw.get("checked") or {}
    if checked and (not isinstance(checked, dict) or set(checked) != {"date", "versions"}):
        raise InputError(path, raw.lines["checked"], "checked", "must be a mapping with date and versions")
    fixed_in = raw.get("fixed_in") or ""
    return str(tracker), {str(k): str(v) for k, v in checked.items()}, str(fixed_in)


def _load_host(path: str, raw: LineMap) -> dict[str, Any]:
    host = raw.get("host")
    if host is None:
        return {}
    if not isinstance(host, dict) or not host:
        raise InputError(path, raw.lines["host"], "host", "must be a non-empty mapping of host facts")
    for key, want in host.items():
        where = host.lines[key] if isinstance(host, LineMap) else raw.lines["host"]
        if key not in FACTS:
            raise InputError(path, where, f"host.{key}", f"unknown host fact (known: {', '.join(FACTS)})")
        if isinstance(want, dict) and not set(want) <= {"has", "lacks", "min", "max"}:
            raise InputError(path, where, f"host.{key}", "a mapping must use has/lacks or min/max")
    return dict(host)
