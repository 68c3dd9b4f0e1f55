"""Shared helpers for the harness's own tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from harness.commands.smoke_select import full_tests
from harness.execution.records import Record
from harness.execution.runner import run_cases
from harness.judge.verdict import Verdicts
from harness.model.build import make_case
from harness.model.case import Case

__all__ = ["make_case", "run_on"]

# what pytester changes in a test's environment (read here, at collection, before any test runs)
_PYTESTER_ENV = ("HOME", "USERPROFILE", "PY_COLORS")
_SESSION_ENV = {k: os.environ.get(k) for k in _PYTESTER_ENV}


def run_pytest(pytester: Any, *args: str, timeout: float = 300.0) -> Any:
    """`pytester.runpytest_subprocess(*args)` under the session's environment: pytest in a process of its own
    in pytester's directory, with its --basetemp there, giving pytester's RunResult. pytester's own points
    HOME and USERPROFILE at its directory, sets PY_COLORS and puts the directory on PYTHONPATH; a process
    under another environment cannot fork its workers from the templates the session runs (a zygote is
    keyed by the environment: harness/execution/zygote.py), so each nested run imported its frameworks once
    more (torch: ~4 s of CPU). The nested run needs none of them: its cases and known issues are in its
    working directory and convdiff's plugin is found through its entry point."""
    import subprocess
    import sys
    import tempfile
    import time

    from _pytest.pytester import RunResult

    env = {k: v for k, v in os.environ.items() if k not in _PYTESTER_ENV}
    env.update({k: v for k, v in _SESSION_ENV.items() if v is not None})
    basetemp = tempfile.mkdtemp(prefix="runpytest-", dir=pytester.path)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", f"--basetemp={basetemp}", *args], cwd=pytester.path,
                          env=env, capture_output=True, text=True, timeout=timeout)
    return RunResult(proc.returncode, proc.stdout.splitlines(), proc.stderr.splitlines(), time.monotonic() - start)


def run_on(cases: Sequence[Case], backends: Sequence[str], device: str = "cpu", timeout: float = 120.0,
           known: bool = False, select: Callable[[str, Case], bool] | None = None) -> list[Record]:
    """Run cases through the real isolated workers; frameworks never load in the test process.

    known: match results to cases/known_issues.yaml with each worker's live host facts, so a
    verdict that depends on the host is explained by its entry (record.known_issue) or not at all.
    select(backend, case): run only those pairs (default: every case on every backend).
    """
    from pathlib import Path

    from harness.judge.known_issues import load_known_issues

    entries = load_known_issues(Path(__file__).resolve().parents[1] / "cases" / "known_issues.yaml") if known else None
    records: list[Record] = []
    info = run_cases(cases, [(b, device) for b in backends], records.append, Verdicts(entries), timeout=timeout,
                     select=select)
    if info.skipped:
        import pytest

        pytest.skip("; ".join(f"{t}: {r}" for t, r in info.skipped.items()))
    return records


def chosen_records(chosen: dict, backends: Sequence[str], timeout: float = 120.0) -> list[Record]:
    """Run corpus cases named by (file, case id) -> {backend: status} (or a tuple of backends), each on the
    backends chosen for it only (a build per pair on the compiled paths)."""
    from pathlib import Path

    from harness.model.loader import load_cases

    root = Path(__file__).resolve().parents[1]
    files = sorted({f for f, _ in chosen})
    cases = [c for c in load_cases([str(root / "cases" / f) for f in files]) if (Path(c.file).name, c.id) in chosen]
    assert len(cases) == len(chosen), "a chosen case is missing from the corpus"
    recs = run_on(cases, backends, timeout=timeout, known=True,
                  select=lambda backend, case: backend in chosen[(Path(case.file).name, case.id)])
    return [r for r in recs if r.backend in chosen[(Path(r.file).name, r.case_id)]]


def assert_chosen_statuses(records: Sequence[Record], chosen: dict, host_dependent: dict) -> None:
    """Each chosen result has its chosen status; one listed in host_dependent has it only where its
    known issue (decided from the worker's live host facts) matched, and passes elsewhere."""
    from pathlib import Path

    got = {(Path(r.file).name, r.case_id, r.backend): r.status for r in records}
    want = {(f, cid, b): s for (f, cid), per in chosen.items() for b, s in per.items()}
    for r in records:
        key = (Path(r.file).name, r.case_id, r.backend)
        ids = host_dependent.get(key)
        if ids is not None and r.known_issue not in ((ids,) if isinstance(ids, str) else ids):
            want[key] = "pass"
    assert got == want  # the chosen known divergences still diverge (else pick new cases)


def script_sample(records: Sequence[Record], per_backend: int = 1) -> list[Record]:
    """The records whose reproducers a test runs. Under make test, per backend its first failing record
    (its first record when none fails): every backend's template runs, on the record that shows what the
    script is for, within the time budget (issue 26). The verdict lines after `run_framework` are the
    same code for every template, and a pass and a failure of it both run across the modules. With
    CONVDIFF_FULL_TESTS=1 (the nightly), every record."""

    if full_tests():
        return list(records)
    kept: dict[str, list[Record]] = {}
    for rec in sorted(records, key=lambda r: r.status == "pass"):  # stable: collection order within each
        mine = kept.setdefault(rec.backend, [])
        if len(mine) < per_backend and rec.status not in {r.status for r in mine}:
            mine.append(rec)
    chosen = {id(r) for rs in kept.values() for r in rs}
    return [r for r in records if id(r) in chosen]


def run_scripts(records: Sequence[Record], scripts: Sequence[str], tmp_path) -> list[tuple[int, str]]:
    """Each reproducer in a process of its own, two at a time: (exit code, output); see run_named_scripts."""
    import re

    # numbered: records may differ only in output
    names = [f"{i:02d}_{re.sub(r'[^a-z0-9]+', '_', f'{rec.case_id}_{rec.backend}_{rec.output}'.lower())}"
             for i, rec in enumerate(records)]
    return run_named_scripts(list(zip(names, scripts)), tmp_path)


def run_named_scripts(named: Sequence[tuple[str, str]], tmp_path) -> list[tuple[int, str]]:
    """Each (file name, source) script in a process of its own, two at a time: (exit code, stdout and
    stderr together).

    Each script is forked from an interpreter that has already imported its frameworks: the zygote template
    its backend's workers fork from (SCRIPT_TEMPLATES), or, for a set of imports no template matches, a
    script server (tests/script_fork.py) kept for the pytest process (`_script_server`), or for the whole
    session under xdist. Each still runs alone, as `python script.py` would, without paying the framework
    import again. CONVDIFF_FORK_SCRIPTS=0 starts a fresh interpreter per script instead."""
    import os
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    from tests.script_fork import heavy_imports

    paths = []
    for name, script in named:
        path = tmp_path / f"{name}.py"
        path.write_text(script)
        paths.append(path)
    if os.environ.get("CONVDIFF_FORK_SCRIPTS", "1") == "0":
        def one(path: Path) -> tuple[int, str]:
            proc = subprocess.run([sys.executable, str(path)], cwd=path.parent, capture_output=True, text=True, timeout=300)
            return proc.returncode, proc.stdout + proc.stderr

        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(one, paths))
    groups: dict[tuple[tuple[str, ...], str | None], list[int]] = {}
    for i, (_, script) in enumerate(named):
        modules = tuple(heavy_imports(script))
        groups.setdefault((modules, script_template(modules, script)), []).append(i)
    results: list[tuple[int, str]] = [(-1, "") for _ in named]
    for (modules, template), members in groups.items():
        forked = _run_forked(template, [paths[i] for i in members]) if template else {}
        rest = [i for k, i in enumerate(members) if k not in forked]
        codes = {members.index(i): rc for i, rc in zip(rest, _run_served(modules, [paths[i] for i in rest], tmp_path))}
        for k, i in enumerate(members):
            code = forked.get(k, codes.get(k))
            assert code is not None, f"script runner failed: {paths[i].name}"
            results[i] = (code, Path(f"{paths[i]}.out").read_text(errors="replace"))
    return results


SCRIPT_TIMEOUT_S = 300.0
# A script's heavy imports (tests/script_fork.py heavy_imports) -> (the backend whose zygote template its process
# is forked from, the heavy packages that template imports beyond the script's own list). The template is the
# one that backend's workers fork from (harness/execution/zygote.py), so the frameworks are imported once for
# both. It imports the script's frameworks and no other, except what the script's own imports import anyway:
# `import paddle` imports torch (through tvm_ffi), and torch.onnx.export, tf2onnx and paddle.onnx.export import
# onnx (the last also paddle2onnx). A TensorFlow template has jax and matplotlib blocked, the paddle one torch
# (Backend.excludes): optional imports the frameworks catch, which no script uses. A script that torch.compiles or torch.exports forks from
# torch-inductor's template (dynamo and inductor imported, the vector ISA picked).
SCRIPT_TEMPLATES: dict[frozenset[str], tuple[str, frozenset[str]]] = {
    frozenset(s.split()): (backend, frozenset(also.split())) for s, backend, also in [
        ("torch", "torch", ""), ("torch torchao", "torch", ""), ("jax", "jax", ""), ("paddle", "paddle", ""),
        ("tensorflow", "tensorflow", ""), ("tensorflow keras", "tensorflow", ""),
        ("tensorflow ai_edge_litert", "litert", ""), ("flatbuffers tensorflow ai_edge_litert", "litert", ""),
        ("tvm", "tvm", ""), ("tvm torch", "tvm", ""), ("tvm onnx", "tvm", ""),
        ("tvm tensorflow", "tvm-tflite-import", ""),
        ("onnxruntime torch", "torch-onnx-ort", "onnx"), ("onnx onnxruntime torch", "torch-onnx-ort", ""),
        ("onnxruntime tensorflow tf2onnx", "tf2onnx-ort", "onnx"), ("onnx onnxruntime tensorflow tf2onnx", "tf2onnx-ort", ""),
        ("onnxruntime paddle", "paddle2onnx-ort", "onnx paddle2onnx"),
        ("onnxruntime", "onnxruntime", ""), ("onnx onnxruntime", "onnxruntime", ""),
        ("openvino", "openvino", ""), ("onnx openvino", "openvino", ""),
        ("torch executorch", "executorch", "torchao"), ("torch torchao executorch", "executorch", "")]}


def script_template(modules: Sequence[str], source: str) -> str | None:
    """The backend whose zygote a script with these heavy imports forks from (SCRIPT_TEMPLATES), or None:
    its own script server (tests/script_fork.py)."""
    entry = SCRIPT_TEMPLATES.get(frozenset(modules))
    if entry is None:
        return None
    if entry[0] == "torch" and ("torch.compile(" in source or "torch.export." in source):
        return "torch-inductor"
    return entry[0]


def _run_forked(backend: str, paths: Sequence) -> dict[int, int]:
    """{index: exit code} of the scripts run, each in a process forked from `backend`'s zygote, two at a
    time; an index left out found no zygote (CONVDIFF_ZYGOTE=0, or it died) and runs in a script server."""
    import os
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from harness.execution.preloads import zygote_of

    zygote = zygote_of(backend)
    if zygote is None or not zygote.ready():
        return {}

    def one(path) -> int | None:
        fd = os.open(f"{path}.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            proc = zygote.fork_script(str(path), fd, dict(os.environ))
        finally:
            os.close(fd)
        if proc is None:
            return None
        try:
            return proc.wait(SCRIPT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()

    with ThreadPoolExecutor(2) as pool:
        codes = list(pool.map(one, paths))
    return {k: rc for k, rc in enumerate(codes) if rc is not None}


def _run_served(modules: tuple[str, ...], paths: Sequence, tmp_path) -> list[int]:
    """The scripts' exit codes, run by the script server for these heavy modules (tests/script_fork.py)."""
    import json

    if not paths:
        return []
    jobs = [{"path": str(path), "out": f"{path}.out"} for path in paths]
    jobs_file = tmp_path / f"{paths[0].stem}.jobs.json"
    jobs_file.write_text(json.dumps(jobs))
    codes = _script_server(modules).run(jobs_file, SCRIPT_TIMEOUT_S * len(paths))
    assert len(codes) == len(paths), f"script runner failed: {codes}"
    return [codes[k] for k in range(len(paths))]


class _ScriptServer:
    """tests/script_fork.py --serve for one ordered set of heavy modules, kept for the pytest process; in
    an xdist session (harness/execution/shared.py) the session's `--listen` server for the set, started by
    whichever process asks first, so that the two processes of `make test` import each set once."""

    def __init__(self, modules: tuple[str, ...]) -> None:
        import os
        import subprocess
        import sys
        from pathlib import Path

        from harness.execution import shared
        from harness.execution.zygote import RUNTIME_ONLY

        self.runner = [sys.executable, str(Path(__file__).with_name("script_fork.py"))]
        self.modules = modules
        self.shared = shared.directory()
        self.proc: subprocess.Popen | None = None
        if self.shared is not None:  # keyed as a zygote is: what the imports could read
            env = sorted((k, v) for k, v in os.environ.items() if not k.startswith("PYTEST_") and k not in RUNTIME_ONLY)
            self.key = shared.name("scripts", modules, env, sys.executable)
            return
        self.proc = subprocess.Popen([*self.runner, "--serve", *modules], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def alive(self) -> bool:
        return self.proc is None or self.proc.poll() is None

    def run(self, jobs_file, timeout: float) -> dict[int, int]:
        """{job index: exit code} once the server says the file is done (a dead server: what came back)."""
        import threading

        if self.proc is None:
            return self._run_shared(jobs_file, timeout)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        timer = threading.Timer(timeout, self.proc.kill)
        timer.start()
        codes: dict[int, int] = {}
        try:
            _ask(self.proc.stdin, self.proc.stdout, jobs_file, codes)
        except (BrokenPipeError, ValueError):
            pass
        finally:
            timer.cancel()
        return codes

    def _run_shared(self, jobs_file, timeout: float) -> dict[int, int]:
        import subprocess

        from harness.execution import shared

        assert self.shared is not None
        start = lambda path: subprocess.Popen([*self.runner, "--listen", str(path), *self.modules],  # noqa: E731
                                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL, start_new_session=True)
        sock = shared.connect_or_start(self.shared, self.key, start, lambda proc: proc.poll() is None, 300.0)
        codes: dict[int, int] = {}
        if sock is None:
            return codes
        sock.settimeout(timeout)
        try:
            with sock, sock.makefile("rw", buffering=1) as stream:
                _ask(stream, stream, jobs_file, codes)
        except (OSError, ValueError):
            pass
        return codes

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _ask(out: Any, answers: Any, jobs_file, codes: dict[int, int]) -> None:
    """Name the jobs file to a script server, then read {job index: exit code} into `codes` until it is done."""
    import json

    out.write(f"{jobs_file}\n")
    out.flush()
    for line in answers:
        if line.startswith("{"):
            msg = json.loads(line)
            if "done" in msg:
                return
            codes[msg["i"]] = msg["rc"]


_SERVERS: dict[tuple[str, ...], _ScriptServer] = {}
MAX_SCRIPT_SERVERS = 6  # each holds its frameworks imported (up to ~1 GB for TensorFlow)


def _script_server(modules: tuple[str, ...]) -> _ScriptServer:
    """The process's server for these modules (started on first use; the least recently used one is
    closed beyond MAX_SCRIPT_SERVERS, and a dead one replaced). A shared server is never closed by a
    client: it leaves when idle (tests/script_fork.py IDLE_S)."""
    import atexit

    server = _SERVERS.pop(modules, None)
    if server is None or not server.alive():
        if not _SERVERS:
            atexit.register(lambda: [s.close() for s in _SERVERS.values()])
        server = _ScriptServer(modules)
    _SERVERS[modules] = server  # most recently used last
    while len(_SERVERS) > MAX_SCRIPT_SERVERS:
        _SERVERS.pop(next(iter(_SERVERS))).close()
    return server


def assert_script_verdict(rec: Record, rc: int, out: str, where: str) -> None:
    """A reproducer's output agrees with the harness: verdict, exit code, exception type, error and ratio."""
    import re

    import pytest

    assert re.findall(r"^verdict: (\w+)$", out, re.M) == [rec.status], where
    assert rc == (0 if rec.status == "pass" else 1), where
    if rec.status == "rejected":  # the same exception the adapter turned into `rejected`
        raised = re.search(r"^framework raised: (\w+):", out, re.M)
        assert raised and rec.message.startswith(raised.group(1) + ":"), where
    elif rec.status in ("pass", "mismatch") and rec.max_abs_err is not None:
        err = float(re.search(r"max \|err\| = (\S+);", out).group(1))
        ratio = float(re.search(r"error/bound = (\S+) at", out).group(1))
        assert err == pytest.approx(rec.max_abs_err, rel=1e-5, abs=1e-12), where
        assert ratio == pytest.approx(rec.bound_ratio, rel=1e-5, abs=1e-12), where
