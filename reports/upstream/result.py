"""`convdiff repro CASE_ID --backend NAME --issue`: the issue text of one result of a run (not a known issue's
report): its title, the environment, the generated standalone script, its output here, expected vs actual."""

from __future__ import annotations

from reports.upstream.body import clipped, fence
from reports.upstream.environment import environment_block
from reports.upstream.model import ScriptRun


def render_result(title: str, facts: dict, script: str, run: ScriptRun, expected_vs_actual: str, source: str) -> str:
    env = environment_block("", facts)
    lines = [f"# {title}", "", "## Environment", "", *fence(env.text, "text"), "", "## Reproducer", "", source, ""]
    if script:
        lines += ["`repro.py`: NumPy and the framework only. Exit status 1 when the defect shows, 0 when it does not.",
                  "", *fence(script, "python"), ""]
    lines += ["## Output on this host", "", run.verdict(), ""]
    if run.output:
        lines += [*fence(clipped(run.output, 12_000)), ""]
    if expected_vs_actual:
        lines += ["## Expected vs actual", "", expected_vs_actual, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
