"""`convdiff validate PATH...`: check case files and known-issues files without running anything.

A file is a known-issues file by its shape (a top-level `issues:` list; `known_issues.yaml` by its name), a
case file otherwise; a directory gives its case files and its known_issues.yaml. A known-issues file is
checked entry by entry, every problem reported, not only the first:
- the schema (harness/judge/known_issues.py parse_entry: fields, selector fields, statuses, host facts,
  the `when` expression's syntax, max_rel_err, the upstream fields), and no top-level key but `issues`;
- ids unique in the file;
- each `backend` name or glob names a backend this convdiff knows: registered ones (convdiff's, installed
  plugins', the one-off adapters named with --backends) and the test-only `fault:<mode>` / `mutant:<bug>`;
- `device` is cpu or cuda;
- `when` uses only names it can see: the case's parameters, the derived out_size and acc_len, the functions it
  may call and the names it binds itself (`for n, s in zip(...)`).
Each problem is one line, `path:line: field: problem`; any problem exits 2.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import fnmatch
import sys
from pathlib import Path

from backends.registry import TEST_PREFIXES, UnknownBackend, get_backend, parse_backends, real_backends
from harness.judge.known_issues import DERIVED_NAMES, issue_list, load_known_issues, parse_entry
from harness.model.case import param_names
from harness.model.loader import NOT_CASE_FILES, case_files, load_file
from harness.model.predicate import FUNCTIONS
from harness.model.yamlmap import InputError, LineMap, load_yaml

DEVICES = ("cpu", "cuda")


def when_names() -> tuple[str, ...]:
    """The names a `when` expression may read: the case's parameters (Case.params()), the derived names, and
    the functions it may call."""
    return (*param_names(), *DERIVED_NAMES, *FUNCTIONS)


def unknown_names(expression: str) -> list[str]:
    """Names the expression reads that it can never see (it binds comprehension targets itself)."""
    tree = ast.parse(expression, mode="eval")
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    read = [n.id for n in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
                                 key=lambda n: (n.lineno, n.col_offset))]
    known = set(when_names()) | bound
    return list(dict.fromkeys(n for n in read if n not in known))


def is_known_issues_file(path: Path) -> bool:
    """A known-issues file by its name or its shape: a mapping whose keys include `issues` and not `cases`."""
    if path.name in NOT_CASE_FILES:
        return True
    doc = load_yaml(str(path))
    return isinstance(doc, LineMap) and "issues" in doc and "cases" not in doc


def _backend_problem(pattern: str, names: list[str]) -> str | None:
    """Why a `backend:` name or glob names no backend this convdiff knows, or None."""
    if any(fnmatch.fnmatchcase(n, pattern) for n in names):
        return None
    prefix, _, arg = pattern.partition(":")
    if prefix in TEST_PREFIXES and arg:
        if any(c in arg for c in "*?["):
            return None
        try:
            get_backend(pattern)
            return None
        except UnknownBackend as exc:
            return str(exc)
    near = difflib.get_close_matches(pattern, names, n=1)
    hint = f" (did you mean '{near[0]}'?)" if near else ""
    return (f"unknown backend '{pattern}'{hint}: no registered backend matches it (`convdiff backends` lists "
            f"them; a one-off adapter: add --backends {pattern}=module:Class)")


def _as_list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [] if value is None else [str(value)]


def _entry_problems(path: str, raw: LineMap, backends: list[str]) -> list[InputError]:
    """What parse_entry does not check: the backends, the devices, the names `when` reads."""
    where = raw.lines
    problems = [InputError(path, where["backend"], "backend", why)
                for why in (_backend_problem(b, backends) for b in _as_list(raw.get("backend"))) if why]
    problems += [InputError(path, where["device"], "device", f"unknown device '{d}' (cpu or cuda)")
                 for d in _as_list(raw.get("device")) if d not in DEVICES]
    cases = raw.get("cases")
    if isinstance(cases, LineMap) and "when" in cases:
        try:
            names = unknown_names(str(cases["when"]))
        except SyntaxError:
            names = []  # parse_entry names the syntax error
        problems += [InputError(path, cases.lines["when"], "cases.when",
                                f"unknown name '{n}' (it can use the case's parameters, {', '.join(DERIVED_NAMES)} "
                                "and the names it binds itself)") for n in names]
    return problems


def lint_known_issues(path: str, backends: list[str]) -> list[InputError]:
    """Every problem of a known-issues file (the module docstring), in file order."""
    try:
        doc = load_yaml(path)
        raw_list = issue_list(path, doc)
    except InputError as exc:
        return [exc]
    problems = [InputError(path, doc.lines[key], str(key), "unknown top-level key (a known-issues file has issues:)")
                for key in doc if key != "issues"]
    first_line: dict[str, int] = {}
    for raw, line in zip(raw_list, raw_list.lines):
        try:
            parse_entry(path, raw, line)  # the schema: its first problem in this entry
        except InputError as exc:
            problems.append(exc)
        if not isinstance(raw, LineMap):
            continue
        if raw.get("id") is not None:
            entry_id = str(raw["id"])
            if entry_id in first_line:
                problems.append(InputError(path, raw.lines["id"], "id",
                                           f"duplicate id '{entry_id}' (first at line {first_line[entry_id]})"))
            first_line.setdefault(entry_id, raw.lines["id"])
        problems += _entry_problems(path, raw, backends)
    return sorted(problems, key=lambda e: e.line)


def cmd_validate(args: argparse.Namespace, argv: list[str]) -> int:
    """Check every file given (the module docstring); print each problem, exit 2 when there is one."""
    backends = real_backends()
    if args.backends:  # one-off adapters a known-issues file names
        backends += [b for b in parse_backends(args.backends) if b not in backends]
    problems: list[InputError] = []
    cases, known_files = [], []
    for p in map(Path, args.paths):
        if p.is_dir():
            known_files += [p / name for name in NOT_CASE_FILES if (p / name).exists()]
            files = case_files([p])
        elif not p.exists():
            problems.append(InputError(str(p), 0, "file", "no such file or directory"))
            continue
        else:
            files = [p]
        for f in files:
            try:
                if is_known_issues_file(f):
                    known_files.append(f)
                    continue
                found = load_file(f)
            except InputError as exc:
                problems.append(exc)
                continue
            cases += found
            print(f"{f}: {len(found)} cases ({sum(c.tier == 'smoke' for c in found)} smoke)")
    for known in dict.fromkeys(known_files):
        mine = lint_known_issues(str(known), backends)
        problems += mine
        if mine:
            continue
        issues = load_known_issues(known)
        print(f"{known}: {len(issues.entries)} known issues")
        if cases:
            for e in issues.stale(cases, backends):
                print(f"warning: known issue '{e.id}' matches no case given", file=sys.stderr)
    for problem in problems:
        print(str(problem), file=sys.stderr)
    if problems:
        return 2
    known_count = len(dict.fromkeys(known_files))
    print(f"ok: {len(cases)} cases" + (f", {known_count} known-issues file(s)" if known_count else ""))
    return 0
