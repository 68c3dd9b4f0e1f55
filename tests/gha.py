"""A job of .github/workflows/*.yml run here, as a runner would run it: the nearest thing to a real runner.

Each `run:` step runs as written, with `bash -e` (GitHub's default shell on Linux) in the job's working
directory, after `${{ ... }}` expressions are substituted from the job's context (matrix, inputs, env,
github.run_id, steps.<id>.outputs). `$GITHUB_ENV` and `$GITHUB_OUTPUT` are files, read back after each step
as a runner does. `uses:` steps are the hosted actions, which cannot run here: each is done by a local
equivalent the caller passes (checkout: a copy of the working tree; setup-python: a fresh virtualenv first on
PATH; download-artifact, upload-artifact, cache restore/save: directories). An action with no equivalent is
an error, so a new step in a workflow is never skipped in silence.

Used by tests/test_install_matrix.py (the nightly's report job) and bench/workflow_jobs.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Action = Callable[["Job", dict[str, Any]], None]  # (the job, the step's `with:`) -> None


@dataclass
class StepResult:
    name: str
    returncode: int
    output: str


@dataclass
class Job:
    """One job of a workflow, with the state a runner keeps between its steps."""

    workflow: Path
    job_id: str
    workdir: Path
    matrix: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    run_id: str = "1"
    env: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    results: list[StepResult] = field(default_factory=list)

    @property
    def spec(self) -> dict[str, Any]:
        doc = yaml.safe_load(self.workflow.read_text())
        return doc["jobs"][self.job_id] | {"_env": doc.get("env") or {}}

    # --- expressions --------------------------------------------------------------------------------------
    def value(self, expr: str) -> Any:
        """One `${{ }}` expression: a context path, a quoted string, `a || b`, `a == b`, `a && b`, always()."""
        expr = expr.strip()
        if "||" in expr:
            return next((v for v in (self.value(p) for p in expr.split("||")) if v), "")
        if "&&" in expr:
            return all(self.value(p) for p in expr.split("&&"))
        if "==" in expr:
            a, b = expr.split("==", 1)
            return self.value(a) == self.value(b)
        if expr == "always()":
            return True
        if expr[:1] in "'\"":
            return expr[1:-1]
        if re.fullmatch(r"\d+", expr):
            return int(expr)
        head, _, rest = expr.partition(".")
        tables: dict[str, Any] = {"matrix": self.matrix, "inputs": self.inputs, "env": self.env,
                                  "github": {"run_id": self.run_id}, "steps": self.outputs}
        if head not in tables:
            raise ValueError(f"{self.workflow.name}: expression '{expr}' is not one this runner evaluates")
        value: Any = tables[head]
        for part in rest.split("."):
            value = value.get(part, "") if isinstance(value, Mapping) else ""
        return value

    def substitute(self, text: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(self.value(m.group(1))), text)

    # --- running --------------------------------------------------------------------------------------
    def run(self, actions: Mapping[str, Action], base_env: Mapping[str, str], stop: str | None = None) -> None:
        """Every step in order (`stop`: the name of the first step not to run). A failing step ends the job
        (later steps run only under `if: always()`), as on a runner; the results say which."""
        spec = self.spec
        self.env = {**{k: self.substitute(str(v)) for k, v in spec["_env"].items()},
                    **{k: self.substitute(str(v)) for k, v in (spec.get("env") or {}).items()}}
        failed = False
        for step in spec["steps"]:
            name = step.get("name") or step.get("uses") or step["run"].splitlines()[0]
            if stop is not None and name == stop:
                return
            cond = step.get("if")
            if failed and not (cond and "always()" in str(cond)):
                continue
            if cond is not None and not self.value(str(cond).replace("${{", "").replace("}}", "")):
                continue
            if "uses" in step:
                action = step["uses"].split("@")[0]
                if action not in actions:
                    raise KeyError(f"{self.workflow.name}: no local equivalent for {step['uses']} (step '{name}')")
                params = {k: self.substitute(str(v)) for k, v in (step.get("with") or {}).items()}
                actions[action](self, params)
                self.results.append(StepResult(name, 0, ""))
                continue
            result = self._bash(step, name, base_env)
            self.results.append(result)
            failed = failed or result.returncode != 0

    def _bash(self, step: dict[str, Any], name: str, base_env: Mapping[str, str]) -> StepResult:
        gh_env, gh_out = self.workdir / ".github_env", self.workdir / ".github_output"
        gh_env.write_text("")
        gh_out.write_text("")
        runner_temp = self.workdir.parent / f"runner-temp-{self.job_id}-{self.run_id}"  # the runner's $RUNNER_TEMP
        runner_temp.mkdir(exist_ok=True)
        env = {**base_env, **self.env, **{k: self.substitute(str(v)) for k, v in (step.get("env") or {}).items()},
               "GITHUB_ENV": str(gh_env), "GITHUB_OUTPUT": str(gh_out), "RUNNER_TEMP": str(runner_temp), "CI": "true"}
        proc = subprocess.run(["bash", "-e", "-c", self.substitute(step["run"])], cwd=self.workdir, env=env,
                              capture_output=True, text=True, timeout=3600)
        self.env.update(_pairs(gh_env.read_text()))
        if step.get("id"):
            self.outputs[step["id"]] = {"outputs": _pairs(gh_out.read_text())}
        return StepResult(name, proc.returncode, proc.stdout + proc.stderr)

    def step(self, name: str) -> StepResult:
        found = [r for r in self.results if r.name == name]
        assert found, f"step '{name}' did not run (ran: {[r.name for r in self.results]})"
        return found[-1]


def _pairs(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def path_env(venv: Path) -> dict[str, str]:
    """The environment of a step whose `python` is the job's virtualenv (what setup-python puts first on PATH)."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR", "PIP_CACHE_DIR")}
    return {**keep, "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(venv)}
