"""The pytest items of convdiff's plugin: a case file, one item per case x backend x device x output.

Items run through the same warm, isolated workers as `convdiff run`. Known issues are xfail (non-strict: a
pass shows as XPASS, "fixed upstream?"); a different failing status than the one known still fails. A target
that is not installed, or a device that is absent, is a skip with the reason; a target that is installed
but broken (its worker does not start, its setup() raises) is an error of each of its items.
"""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

import pytest

from backends.registry import cli_name, get_backend
from harness.execution.host import cpu_facts, merged
from harness.judge.known_issues import KnownIssue, shown
from harness.judge.relations import relation_record
from harness.judge.verdict import judge, judge_case
from harness.model.case import Case
from harness.model.loader import known_issues_dir, load_file
from harness.model.yamlmap import InputError
from harness.numerics.relations import output_name

# the plugin's per-process state (harness.commands.plugin_state.ConvdiffState), and how to make it on first use
STATE = pytest.StashKey[Any]()
FACTORY = pytest.StashKey[Any]()


class ExpectedDivergence(AssertionError):
    """Raised when a result has exactly the status its known issue predicts."""


class BrokenTarget(pytest.fail.Exception):  # type: ignore[misc,name-defined]
    """The target is installed but cannot run: raised in an item's setup, so pytest reports an error. An
    outcome without a Python traceback (pytrace=False): the report is the one line naming target and cause
    (pytest formats a setup error itself, without the item's repr_failure)."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg, pytrace=False)


BrokenTarget.__module__ = "builtins"  # as pytest's own outcomes: its short summary reads "BrokenTarget: <target> ..."


def state_of(config: pytest.Config) -> Any:
    """This process's convdiff state, made on first use (a file with the marker may ask for it late)."""
    found = config.stash.get(STATE, None)
    if found is None:
        found = config.stash[STATE] = config.stash[FACTORY](config)
    return found


class CaseFile(pytest.File):
    def collect(self):
        state = state_of(self.config)
        cases = load_file(self.path)
        where = known_issues_dir(self.path.parent)  # cases/models/ uses cases/known_issues.yaml
        known = state.known_for(where)
        state.collected.setdefault(where, []).extend(cases)
        for case in cases:
            if state.tier == "smoke" and case.tier != "smoke":
                continue
            if state.gradients and not case.gradients:
                case = dataclasses.replace(case, gradients=True)
            for backend in state.backends:
                adapter = get_backend(backend)
                for device in state.devices:
                    if device not in adapter.capabilities.devices:
                        continue
                    relations = state.relations.for_case(case) if state.relations is not None else ()
                    for output in ("out", *case.gradient_outputs, *(output_name(r) for r in relations)):
                        suffix = "" if output == "out" else f"-{output}"  # forward ids stay as they were
                        item = CaseItem.from_parent(self, name=f"{case.id}[{backend}-{device}{suffix}]",
                                                    case=case, backend=backend, device=device, output=output)
                        # under `--dist loadgroup` (make test) one xdist process runs all of a
                        # target's items: its framework is imported once and its builds batch whole
                        item.add_marker(pytest.mark.xdist_group(f"{backend}-{device}"))
                        reason = state.unavailable(backend)
                        if reason:
                            item.add_marker(pytest.mark.skip(reason=reason))
                        item.known = known.candidates(case, backend, device, output)
                        item.forward_known = known.candidates(case, backend, device) if output != "out" else []
                        if item.known and not any(e.host for e in item.known):
                            item.expect(item.known[0])
                        yield item

    def repr_failure(self, excinfo):  # a Collector's takes no style
        if isinstance(excinfo.value, InputError | pytest.UsageError):  # a bad case or known-issues file: one line
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, backend: str, device: str, output: str = "out", **kw: Any) -> None:
        super().__init__(**kw)
        self.case, self.backend, self.device, self.output = case, backend, device, output
        self.forward_known: list[KnownIssue] = []  # a gradient item whose forward failed takes these
        self.known_status: list[str] = []
        self.known: list[KnownIssue] = []  # entries matching on some host; `host:` ones decided at run time
        self.record = None

    def expect(self, entry: KnownIssue) -> None:
        where = f"; {shown(entry.source)}" if entry.source else ""  # which file explains it (the user's, or convdiff's)
        self.add_marker(pytest.mark.xfail(reason=f"{entry.id}: {entry.reason} ({entry.link}{where})",
                                          raises=ExpectedDivergence, strict=False))
        self.known_status = entry.status

    def setup(self) -> None:
        """Start (or adopt) the target's worker: a broken target is an error, an absent device a skip."""
        worker = state_of(self.config).worker(self.backend, self.device)
        if worker.reason and worker.broken:
            state_of(self.config).done(self.backend, self.device)
            raise BrokenTarget(f"{self.backend}-{self.device} is installed but broken: {worker.reason}")
        if worker.reason:
            state_of(self.config).done(self.backend, self.device)
            pytest.skip(f"{self.backend}-{self.device}: {worker.reason}")

    def runtest(self) -> None:
        state = state_of(self.config)
        try:
            self._run(state)
        finally:
            state.done(self.backend, self.device)

    def _run(self, state: Any) -> None:
        worker = state.worker(self.backend, self.device)
        if any(e.host for e in self.known):
            # Host-dependent entries: the worker's live facts decide. pytest reads xfail marks
            # added during the call when none was there at setup.
            facts = merged(cpu_facts(), worker.host)
            entry = next((e for e in self.known if e.host_matches(facts)), None)
            if entry is not None:
                self.expect(entry)
        inputs, oracle = state.oracle(self.case)
        shared = self.case.gradient_outputs or (state.relations is not None and state.relations.for_case(self.case))
        payload = state.answer(self.case, worker, inputs) if shared else None  # one run for all of its items
        if payload is None:
            worker.submit(self.case, inputs)
            payload = worker.collect(state.timeout)
        if self.output == "out":
            rec = judge(self.case, self.backend, worker, payload, oracle, None, inputs)
        elif self.output.startswith("relation:"):
            full = state.relation_payload(self.case, worker, inputs, oracle)
            rec = relation_record(self.output.partition(":")[2], self.case, self.backend, worker, full, inputs,
                                  oracle, None, None)
            if full["status"] != "ok" and not self.known_status and self.forward_known:
                facts = merged(cpu_facts(), worker.host)
                entry = next((e for e in self.forward_known if e.host_matches(facts)), None)
                if entry is not None:
                    self.expect(entry)  # no relation ran: the forward's known issue stands
        else:
            recs = judge_case(self.case, self.backend, worker, payload, oracle, None, inputs,
                              state.grad_oracle(self.case, inputs))
            rec = next(r for r in recs if r.output == self.output)
            sub = (payload.get("grads") or {}).get(self.output) or {"inherited": True}
            if sub.get("inherited") and not self.known_status and self.forward_known:
                facts = merged(cpu_facts(), worker.host)
                entry = next((e for e in self.forward_known if e.host_matches(facts)), None)
                if entry is not None:
                    self.expect(entry)  # the backward pass never ran: the forward's known issue stands
        self.record = rec
        if rec.status == "unsupported":
            pytest.skip(f"unsupported: {rec.message}")
        if rec.status not in ("pass", "within_bound"):
            known_status = self.known_status
            if rec.status == "mismatch" and any(e.max_rel_err is not None for e in self.known):
                # as the run's judge: the first entry that explains an error this large decides
                facts = merged(cpu_facts(), worker.host)
                entry = next((e for e in self.known if e.host_matches(facts) and e.explains(rec.error_size)), None)
                known_status = entry.status if entry is not None else []
            cls = ExpectedDivergence if rec.status in known_status else AssertionError
            raise cls(rec.status)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, BrokenTarget):
            return str(excinfo.value)
        rec = self.record
        if rec is None or not isinstance(excinfo.value, AssertionError):
            return super().repr_failure(excinfo, style)
        lines = [f"{rec.status}: {rec.message}"]
        if rec.bound_ratio is not None:
            lines.append(f"max |err| {rec.max_abs_err:.3g}, bound ratio {rec.bound_ratio:.3g}"
                         + (f", diagnosis {rec.diagnosis}" if rec.diagnosis else ""))
        lines += ["call:", *("    " + ln for ln in rec.translation.splitlines()),
                  f"case: {self.case.file}:{self.case.line}  seed {self.case.seed}",
                  f"repro: {self.repro_command()}"]
        return "\n".join(lines)

    def repro_command(self) -> str:
        """The `convdiff repro` line for this item, runnable from the directory pytest was started in: it
        names the case file (which need not be under ./cases) and a one-off adapter's module:Class."""
        here = self.config.invocation_params.dir
        path = Path(self.case.file).resolve()
        shown = path.relative_to(here) if path.is_relative_to(here) else path
        return (f"convdiff repro '{path.name}::{self.case.id}' --backend {cli_name(self.backend)} "
                f"--device {self.device} --cases {shlex.quote(str(shown))}" + (f" --output {self.output}" if self.output != "out" else ""))

    def reportinfo(self):
        what = "" if self.output == "out" else f" ({self.output})"
        return self.path, self.case.line - 1, f"{self.case.id} on {self.backend}-{self.device}{what}"
