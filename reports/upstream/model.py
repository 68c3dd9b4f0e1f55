"""What an upstream report holds, gathered by harness/commands/upstream/ and rendered by body.py and details.py."""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ScriptRun:
    """A script's run here: exit status (None: not run, `note` says why; negative: killed by that signal), its
    stdout and stderr together, the seconds it took, whether it ran past its timeout."""

    exit: int | None = None
    output: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    note: str = ""

    @property
    def traceback(self) -> bool:
        """A Python traceback: its header starts a line (Paddle's fatal-signal handler prints "C++ Traceback (most
        recent call last):" before the signal a crash snippet may die by; that is not one)."""
        return re.search(r"^Traceback \(most recent call last\)", self.output, re.M) is not None

    @property
    def signal_name(self) -> str:
        if self.exit is None or self.exit >= 0:
            return ""
        try:
            return signal.Signals(-self.exit).name
        except ValueError:
            return f"signal {-self.exit}"

    def ending(self) -> str:
        """How it ended, as the last line of its output block: 'exit status 1', 'killed by SIGFPE'."""
        if self.exit is None:
            return f"not run: {self.note}" if self.note else "not run"
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        return f"killed by {self.signal_name}" if self.exit < 0 else f"exit status {self.exit}"

    def verdict(self) -> str:
        """One sentence under the exit contract (for the command's own output and the details)."""
        if self.exit is None or self.timed_out:
            return self.ending().capitalize() + "."
        if self.exit < 0:
            return f"Killed by {self.signal_name} after {self.seconds:.1f} s."
        meaning = {0: "the defect does not show here", 1: "the defect shows"}.get(self.exit, "outside the 0/1 contract")
        tb = "; it printed a Python traceback" if self.traceback else ""
        return f"Exit status {self.exit} ({meaning}{tb}) after {self.seconds:.1f} s."


@dataclass
class Outcome:
    """One implementation's result on the witness case. `verdict`: right | same-wrong | other-wrong | refuses |
    accepts | crashes | cannot-express | error; `detail`: numbers or the framework's message."""

    backend: str
    product: str  # with its version: "PyTorch 2.13.0+cpu"
    variant: str  # "" or the path within the product: "torch.compile"
    verdict: str
    detail: str = ""

    @property
    def label(self) -> str:
        return f"{self.product} ({self.variant})" if self.variant else self.product


@dataclass
class Others:
    """The witness case run on every installed implementation: the reported one's result and the others'."""

    case: str  # the case in a few words (reports/repro/issue.py case_summary)
    settings: dict[str, str]  # the environment variables it ran under (the snippet's own)
    reported: Outcome | None
    outcomes: list[Outcome]
    spec: str = ""  # the spec text the right values follow (others.spec_text)
    records: list[dict[str, Any]] = field(default_factory=list)  # every record, for the details


@dataclass
class Block:
    """A fenced block of the body or the details: a caption, the fence's language, the text."""

    caption: str
    lang: str
    text: str


@dataclass
class Report:
    """One root cause's report. `prose`: (label, paragraph) in order; `symptoms`: one line each."""

    root: str
    title: str
    kind: str
    tracker: str
    prose: list[tuple[str, str]]
    code: str  # the snippet's code, after its docstring
    snippet_name: str
    run: ScriptRun
    environment: Block | None = None
    extra: list[Block] = field(default_factory=list)  # IREE's .mlir and command line, TVM's Relax script
    symptoms: list[str] = field(default_factory=list)
    others: Others | None = None
    ask: str = ""
    latest: str = ""  # "still shows in tensorflow-cpu 2.21.0 (2026-11-29; the note)", in the details
    latest_short: str = ""  # "still shows in tensorflow-cpu 2.21.0", in the body
    links: list[str] = field(default_factory=list)
    checks: list[tuple[str, ScriptRun]] = field(default_factory=list)  # (check file name, its run)
    scope: list[str] = field(default_factory=list)  # "It fails exactly when ...": a rule tested on fresh cases
    searched: list[str] = field(default_factory=list)  # "owner/repo: what was searched" (the entries' searched)
    components: list[str] = field(default_factory=list)  # "oneDNN: where it lives" (the entries' component.where)
    legacy: bool = False  # built from a snippet of the older shape
    entries: list[str] = field(default_factory=list)  # the entries it covers (details only)
