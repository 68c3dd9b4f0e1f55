"""`convdiff upstream ID --latest`: the snippet against the newest release of its framework on the package index.

The newest version is what `pip index versions` reports. Where it equals the installed one, the snippet runs
with this interpreter ("newest release is the pinned one"); otherwise in a throwaway virtualenv under
`.convdiff-cache/latest-venvs/<package>-<version>/`, kept for the next run (so `--all` and the nightly reuse
it), into which pip installs that release and the snippet's other imports at their newest. pip's own
configuration applies: where it caps a package below the index's newest (this machine's /etc/xdg/pip allows
torch <= 2.14.1 while 2.15.0 is newest, 2026-11-29), the release that ran is recorded, with a note.

The result: shows (exit 1, or a signal for a crash), fixed (exit 0), not-run (no snippet, no venv, a
traceback). `--record` writes it into the `latest:` field of each entry of the root, a small in-place edit
of those entries' lines (record_latest).
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.commands.upstream.build import package_of
from harness.commands.upstream.scripts import distributions, run_snippet, version
from harness.commands.upstream.subjects import Root
from harness.judge.entry_upstream import Latest

VENVS = "latest-venvs"


@dataclass
class LatestRun:
    root: str
    package: str
    newest: str  # on the index
    ran: str  # the version that ran ('' when none did)
    latest: Latest
    output: str = ""

    def line(self) -> str:
        return f"{self.root}: {self.latest.sentence(self.package)}"


def newest(package: str) -> str:
    """The newest version of a package on the index, as `pip index versions` reports it ('' if unknown)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", package], capture_output=True,
                          text=True, timeout=300)
    m = re.search(rf"^{re.escape(package)} \(([^)]+)\)", proc.stdout, re.M | re.I)
    return m.group(1) if m else ""


def venv_for(package: str, want: str, extras: list[str], venvs: Path) -> tuple[Path | None, str]:
    """(the venv's python, the version pip installed) for package==want (else its newest pip allows)."""
    home = venvs / f"{package}-{want}"
    python = home / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, timeout=600)
    have = _installed(python, package)
    if not have:
        pins = [f"{package}=={want}", *extras]
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *pins], capture_output=True, text=True,
                              timeout=3600)
        if proc.returncode != 0:  # a cap below `want`: the newest release pip allows here
            subprocess.run([str(python), "-m", "pip", "install", "-q", package, *extras], capture_output=True,
                           text=True, timeout=3600)
        have = _installed(python, package)
    return (python, have) if have else (None, "")


def _installed(python: Path, package: str) -> str:
    proc = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
                          capture_output=True, text=True, timeout=120)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def run_latest(root: Root, venvs: Path, timeout: float) -> LatestRun:
    today = datetime.date.today().isoformat()
    path = root.snippet
    source = path.read_text(encoding="utf-8") if path is not None else ""
    package = package_of(root, source)
    if not source or not package:
        why = "no snippet" if not source else "no framework package known for its tracker"
        return LatestRun(root.id, package, "", "", Latest("", "not-run", today, why))
    top = newest(package)
    pinned = version(package)
    if not top:
        return LatestRun(root.id, package, "", "", Latest(pinned or "?", "not-run", today, "the index did not answer"))
    if top == pinned:
        python, ran, note = sys.executable, pinned, "newest release is the pinned one"
        if package.startswith("tensorflow") and not newest("tf-nightly"):  # its template asks for tf-nightly
            note += f" ({package} {pinned}); tf-nightly is not on this package index"
    else:
        extras = [d for d in distributions(source) if d != package]
        venv, ran = venv_for(package, top, extras, venvs)
        if venv is None:
            return LatestRun(root.id, package, top, "", Latest(top, "not-run", today, "pip could not install it here"))
        python = str(venv)
        note = "" if ran == top else f"newest on PyPI is {top}; pip's configuration here allows at most {ran}"
    run = run_snippet(source, timeout, python)
    if run.traceback or run.timed_out or run.exit is None or (run.exit not in (0, 1) and run.exit > 0):
        result, note = "not-run", (note + "; " if note else "") + f"the snippet ended with {run.ending()}"
    else:
        result = "fixed" if run.exit == 0 else "shows"
    return LatestRun(root.id, package, top, ran, Latest(ran, result, today, note), run.output)


def flow(latest: Latest) -> str:
    """The entry's `latest:` line, in flow style."""
    note = latest.note.replace('"', "'")
    return (f'{{version: "{latest.version}", result: {latest.result}, date: {latest.date}'
            + (f', note: "{note}"' if note else "") + "}")


def record_latest(path: Path, ids: list[str], latest: Latest) -> list[str]:
    """Write `latest:` into each entry of `ids` in the known-issues file, editing only those entries' lines:
    an existing `latest:` (with its nested lines) is replaced, else the line goes after the entry's last."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    done = []
    for ident in ids:
        start = next((i for i, ln in enumerate(lines) if re.match(rf"  - id: {re.escape(ident)}\s*$", ln)), None)
        if start is None:
            continue
        end = start + 1
        while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
            end += 1
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        new = f"    latest: {flow(latest)}\n"
        at = next((i for i in range(start + 1, end) if lines[i].startswith("    latest:")), None)
        if at is None:
            lines.insert(end, new)
        else:
            stop = at + 1
            while stop < end and lines[stop].startswith("      "):
                stop += 1
            lines[at:stop] = [new]
        done.append(ident)
    path.write_text("".join(lines), encoding="utf-8")
    return done
