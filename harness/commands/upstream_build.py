"""The parts of an upstream report that need this host: a script's run, the environment, a witness result.

`convdiff upstream ID` (harness/commands/upstream.py) reports one known issue. With a hand-written reproducer
(`<known-issues dir>/upstream/<id>.py`, whose docstring holds the title and sections: reports/upstream.py),
it runs that script. Without one, it takes a witness: the first case of the corpus the entry matches on one of
its backends (KnownIssues.matches, any host), runs it as `convdiff repro` does (find_record), writes that
result's standalone reproducer (script_for) and runs it; the entry's reason is then "What happens".
Every script runs in a fresh interpreter (sys.executable) in its own process group, with a timeout.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import functools
import importlib.metadata
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from backends.registry import get_backend
from harness.commands.upstream_contract import (
    Contract,
    LiveFacts,
    contract,
    entry_backends,
    installed,
    with_backend_facts,
)
from harness.execution.host import cpu_facts, env_settings, host_key
from harness.execution.records import Record
from harness.judge.known_issues import KnownIssue, project_known_issues
from harness.model.case import OUTPUTS, Case
from harness.model.loader import load_cases
from reports.repro.issue import expected_vs_actual, record_title
from reports.upstream import Environment, Report, ScriptRun, fmt, parse_docstring

_STDLIB = frozenset(sys.stdlib_module_names)


def upstream_dir(entry: KnownIssue | None) -> Path | None:
    """Where an entry's hand-written reproducers live: `upstream/` beside its known-issues file."""
    source = entry.source if entry is not None and entry.source else project_known_issues()
    return None if source is None else Path(source).parent / "upstream"


# --- running a script ---------------------------------------------------------------------------------------


def script_env() -> dict[str, str]:
    """The environment a script runs under: ours, unbuffered (stdout and stderr interleave as printed), and
    where it torch.compiles, inductor's caches kept per CPU and ISA setting (inductor's FX graph cache key
    leaves the vector ISA out: backends/torch/inductor.py cache_dir)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    from backends.artifacts import cache_base

    base = cache_base()
    if base is not None and "TORCHINDUCTOR_CACHE_DIR" not in env:
        isa = host_key({"flags": cpu_facts()["cpu_flags"], **{k: v for k, v in env_settings().items()
                                                              if k in ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA")}})
        env["TORCHINDUCTOR_CACHE_DIR"] = str((base / "inductor" / f"upstream-scripts-{isa}").resolve())
    return env


def run_script(path: Path, timeout: float) -> ScriptRun:
    """`python path` in a fresh interpreter, beside the script, in a process group of its own (a script's
    own children die with it on a timeout)."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, str(path.resolve())], cwd=path.parent, env=script_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return ScriptRun(exit=proc.returncode, output=out.decode(errors="replace"), seconds=time.monotonic() - start,
                     timed_out=timed_out)


# --- the environment ----------------------------------------------------------------------------------------


def imported(source: str) -> list[str]:
    """The top-level packages a script imports anywhere in its code (not in its strings), in order; [] where it
    does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))


def script_versions(source: str) -> dict[str, str]:
    """Distribution -> version of every third-party package a script imports (NumPy included)."""
    found: dict[str, str] = {}
    for module in imported(source):
        if module in _STDLIB:
            continue
        for dist in _distributions(module):
            try:
                found.setdefault(dist, importlib.metadata.version(dist))
            except importlib.metadata.PackageNotFoundError:
                continue
    return found


@functools.cache
def _distributions(module: str) -> tuple[str, ...]:
    """The installed distributions that provide a top-level module: one named like it where there is one
    (torch, numpy), else from the whole environment's file lists (tensorflow-cpu, paddlepaddle: seconds, once)."""
    try:
        importlib.metadata.distribution(module)
        return (module,)
    except importlib.metadata.PackageNotFoundError:
        return tuple(dict.fromkeys(_display_name(d) for d in _all_distributions().get(module, [])))


def _display_name(dist: str) -> str:
    """A distribution's name as it publishes it (tensorflow-cpu, not the file lists' tensorflow_cpu)."""
    try:
        return importlib.metadata.distribution(dist).metadata["Name"] or dist
    except importlib.metadata.PackageNotFoundError:
        return dist


@functools.cache
def _all_distributions() -> dict[str, list[str]]:
    return dict(importlib.metadata.packages_distributions())


def environment(frameworks: dict[str, str], entry: KnownIssue | None, terms: Contract | None) -> Environment:
    return Environment(
        date=datetime.date.today().isoformat(), convdiff=_version("convdiff"), python=platform.python_version(),
        frameworks=frameworks, cpu=cpu_facts(), settings=env_settings(),
        facts=dict(terms.facts) if terms else {}, selector=dict(entry.host) if entry else {},
        applies=terms.why if terms and entry is not None and (entry.host or entry.device) else "")


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# --- reports ------------------------------------------------------------------------------------------------


def from_script(ident: str, path: Path, entry: KnownIssue | None, run: bool, timeout: float,
                live: LiveFacts | None) -> Report:
    """The report of a hand-written reproducer: its docstring's title and sections, its run on this host."""
    source = path.read_text(encoding="utf-8")
    doc = parse_docstring(source)
    terms = with_backend_facts(entry, contract(entry, live), live) if run else None
    result = run_script(path, timeout) if run else ScriptRun(note="--no-run")
    project = doc.project or (entry.tracker if entry else "")
    upstream = doc.fields.get("Upstream") or (entry.link if entry else "not recorded")
    sections = dict(doc.sections)
    sections.update({k: doc.fields[k] for k in ("Related", "Checked") if doc.fields.get(k)})
    return Report(id=ident, title=doc.title or (entry.id if entry else ident), project=project,
                  tracker_url=doc.tracker_url or (f"https://github.com/{project}/issues" if project else ""),
                  upstream=upstream, comment_for=doc.comment_for, env=environment(script_versions(source), entry, terms),
                  script=source, script_name=path.name, run=result, sections=sections, entry_id=entry.id if entry else "")


@functools.cache
def _corpus(directory: str) -> tuple[tuple[Case, dict[str, Any]], ...]:
    return tuple((c, c.params()) for c in load_cases([directory]))


def witness(entry: KnownIssue) -> tuple[Case, str, str, str] | None:
    """(case, backend, device, output): the first case of convdiff's corpus the entry matches on one of its
    backends (installed ones tried first), on any host; a gradient where the entry selects only gradients."""
    project = project_known_issues()
    if project is None:
        return None
    backends = entry_backends(entry)
    device = "cpu" if not entry.device or "cpu" in entry.device else entry.device[0]
    for case, params in _corpus(str(project.parent)):
        grads = dataclasses.replace(case, gradients=True).gradient_outputs
        for output in (o for o in OUTPUTS if o == "out" or o in grads):
            for backend in backends:
                if entry.matches(case, backend, device, None, output, params):
                    return case, backend, device, output
    return None


def urls_in(text: str) -> list[str]:
    return re.findall(r"https?://\S+[^\s.,;:)\]]", text)


def _link_parts(entry: KnownIssue) -> tuple[str, str, str]:
    """(upstream line, the thread a comment is for, the owner/repo of the tracker) from the entry."""
    urls = urls_in(entry.link)
    thread = urls[0] if urls and entry.link.lstrip().startswith("http") else ""
    m = re.match(r"https://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/", thread)
    project = entry.tracker or (m.group(1) if m else "")
    return entry.link, thread, project


def from_witness(entry: KnownIssue, run: bool, timeout: float, live: LiveFacts | None) -> Report:
    """The report of an entry without a hand-written reproducer: its witness case's result and script."""
    from reports.repro.script import ReproUnavailable, find_record, script_for

    upstream, thread, project = _link_parts(entry)
    found = witness(entry)
    sections = {"What happens": entry.reason, "Host": ", ".join(f"{k}: {fmt(v)}" for k, v in entry.host.items()) or "any",
                "Related": entry.link if urls_in(entry.link) and not thread else "", "Checked": _checked(entry)}
    base = Report(id=entry.id, entry_id=entry.id, title=entry.id, project=project,
                  tracker_url=f"https://github.com/{project}/issues" if project else "", upstream=upstream,
                  comment_for=thread, env=environment({}, entry, None), script="", script_name="",
                  run=ScriptRun(note="--no-run" if not run else "no case of the corpus matches the entry"),
                  sections={k: v for k, v in sections.items() if v})
    if found is None:
        return base
    case, backend, device, output = found
    adapter = get_backend(backend)
    where = f"`{Path(case.file).name}::{case.id}` on {backend}-{device}" + ("" if output == "out" else f" ({output})")
    base.source = (f"Generated by convdiff from the first case of its corpus this known issue matches, {where} "
                   f"(`convdiff repro '{Path(case.file).name}::{case.id}' --backend {backend} --device {device}"
                   + ("" if output == "out" else f" --output {output}") + "`).")
    if run:
        try:
            rec = find_record(f"{Path(case.file).name}::{case.id}", backend, device, [case.file], output=output)
        except ReproUnavailable as exc:
            base.run = ScriptRun(note=str(exc))
            return base
        terms = with_backend_facts(entry, contract(entry, live), live, backend)
        base.env = environment({adapter.distribution or adapter.framework: rec.backend_version}, entry, terms)
        base.expected_vs_actual = expected_vs_actual(rec)
    else:
        status = next((s for s in entry.status if s != "pass"), entry.status[0])
        rec = Record(case_id=case.id, file=Path(case.file).name, op=case.op, params=case.params(), backend=backend,
                     backend_version=adapter.version(), device=device, dtype=case.dtype, status=status, output=output)
        base.env = environment({adapter.distribution or adapter.framework: rec.backend_version}, entry, None)
    claimed = next((s for s in entry.status if s != "pass"), rec.status)
    base.title = record_title(rec if rec.status != "pass" else dataclasses.replace(
        rec, status=claimed, bound_ratio=None, message="", diagnosis=None))
    try:
        base.script = script_for(rec)
    except ReproUnavailable as exc:
        base.run = ScriptRun(note=f"no standalone reproducer for this result: {exc}")
        return base
    base.script_name = f"{entry.id}.py"
    if run:
        with tempfile.TemporaryDirectory(prefix="convdiff-upstream-") as tmp:
            path = Path(tmp) / base.script_name
            path.write_text(base.script, encoding="utf-8")
            base.run = run_script(path, timeout)
    return base


def _checked(entry: KnownIssue) -> str:
    if not entry.checked:
        return ""
    return f"{entry.checked.get('date', '?')}, {entry.checked.get('versions', '?')}"


def repro_issue(rec: Record, timeout: float) -> Report:
    """`convdiff repro --issue`: one result's text: its title, the environment, the script and its run here,
    expected vs actual."""
    from reports.repro.script import ReproUnavailable, script_for

    adapter = get_backend(rec.backend)
    facts = LiveFacts().of(rec.backend) if installed(rec.backend) and rec.device == "cpu" else None
    env = environment({adapter.distribution or adapter.framework: rec.backend_version}, None, None)
    env.facts = {rec.backend: facts} if facts is not None else {}
    report = Report(id="", title=record_title(rec), project="", tracker_url="", upstream="", comment_for="", env=env,
                    script="", script_name="", run=ScriptRun(), sections={}, expected_vs_actual=expected_vs_actual(rec))
    report.source = (f"convdiff case `{rec.file}::{rec.case_id}` on {rec.backend}-{rec.device}"
                     + ("" if rec.output == "out" else f", {rec.output}") + (
                         f"; known issue `{rec.known_issue}`" if rec.known_issue else "") + ".")
    try:
        report.script = script_for(rec)
    except ReproUnavailable as exc:
        report.run = ScriptRun(note=f"no standalone reproducer for this result: {exc}")
        return report
    report.script_name = "repro.py"
    with tempfile.TemporaryDirectory(prefix="convdiff-repro-") as tmp:
        path = Path(tmp) / report.script_name
        path.write_text(report.script, encoding="utf-8")
        report.run = run_script(path, timeout)
    return report
