"""Workers forked from a zygote (harness/execution/zygote.py) compute what fresh interpreters compute,
report a crash with its signal, restart by forking, and fall back to a fresh interpreter where forking fails."""

from __future__ import annotations

import os

import pytest

from harness.commands.smoke_select import full_tests
from harness.execution import preloads, warm_pool, zygote
from harness.execution.pool import Worker
from harness.execution.zygote import Forked
from harness.numerics.inputs import make_inputs
from tests.helpers import make_case, run_on

CASES = [make_case(id="c2d", op="conv2d", in_channels=4, out_channels=6, input_size=7, kernel_size=3, stride=2,
                   padding=[[1, 0], [0, 2]], bias=True),
         make_case(id="t1d", op="conv_transpose1d", in_channels=4, out_channels=4, input_size=6, kernel_size=3,
                   stride=2, output_padding=1, groups=2, epilogue=["scale", "relu"]),
         make_case(id="q2d", op="conv2d", in_channels=4, out_channels=2, input_size=5, kernel_size=2, dtype="uint8",
                   quant={"range": "narrow"})]
# paddle2onnx-ort: a zygote that preloads a second and a third framework (torch, paddle) and a converter. The fresh
# interpreters import each framework again: make test compares two of the five (a quantized engine and the zygote of
# three frameworks; 13.9 s for the five of make test's 488.6 s, 2026-12-02, 2-core AMD EPYC Zen 5), the nightly all.
BACKENDS = (["torch", "torch-ao-fbgemm", "tensorflow", "onnxruntime", "paddle2onnx-ort"]
            if full_tests() else ["torch-ao-fbgemm", "paddle2onnx-ort"])


def _view(records: list) -> dict:
    return {(r.case_id, r.backend): (r.status, r.max_abs_err, r.bound_ratio, r.diagnosis, r.message, r.translation)
            for r in records}


def test_forked_workers_give_the_records_fresh_interpreters_give(monkeypatch: pytest.MonkeyPatch) -> None:
    forked = _view(run_on(CASES, BACKENDS))
    monkeypatch.setenv(zygote.ZYGOTE_ENV, "0")
    fresh = _view(run_on(CASES, BACKENDS))
    assert forked == fresh and len(fresh) == len(CASES) * len(BACKENDS)
    assert {s for s, *_ in fresh.values()} >= {"pass", "unsupported"}


def test_preload_names_modules_that_exist() -> None:
    """A zygote imports each installed backend's framework and `Backend.preload`: names that resolve (a
    misspelt one would only fail quietly in the zygote and leave the import to every fork)."""
    import importlib.util

    from backends.registry import get_backend, real_backends

    for name in real_backends():
        adapter = get_backend(name)
        if adapter.unavailable_reason() is None:
            modules = preloads.preload(name)
            blocked = [f"-{m}" for m in adapter.excludes]
            assert list(modules[:len(blocked)]) == blocked, name  # blocked before anything is imported
            modules = modules[len(blocked):]
            assert adapter.framework in modules and len(set(modules)) == len(modules), name
            assert not set(adapter.excludes) & {m.split(".")[0] for m in modules}, name
            # top-level names only: find_spec of a submodule would import its framework into this process
            missing = [m for m in modules if importlib.util.find_spec(m.split(".")[0]) is None]
            assert not missing, (name, missing)


def test_a_template_extends_the_longest_template_it_begins_with_in_order() -> None:
    """zygote.parent_of: a prefix, in order, blocked packages included; the longest; never itself."""
    tf, torch = ("-jax", "tensorflow"), ("torch", "torch.fx")
    templates = [tf, torch, ("torch",), ("onnxruntime",)]
    assert zygote.parent_of(("-jax", "tensorflow", "onnxruntime", "tf2onnx"), templates) == tf
    assert zygote.parent_of(("torch", "torch.fx", "onnxruntime"), templates) == torch
    assert zygote.parent_of(("onnxruntime", "torch", "torch.fx"), templates) == ("onnxruntime",)
    assert zygote.parent_of(("tensorflow", "-jax", "tvm"), templates) is None  # not in the same order
    assert zygote.parent_of(tf, templates) is None and zygote.parent_of(("paddle",), templates) is None


def test_the_converter_paths_templates_extend_their_source_frameworks() -> None:
    """The templates that import torch, TensorFlow or paddle beside another framework begin with that
    framework's own template, so they fork from it instead of importing it again (docs/guide/performance.md's figures)."""
    from backends.registry import get_backend

    installed = preloads.templates()
    for child, parent in [("torch-inductor", "torch"), ("torch-onnx-ort", "torch"), ("paddle2onnx-ort", "paddle"),
                          ("tf2onnx-ort", "tensorflow"), ("litert", "tensorflow"), ("tvm-tflite-import", "tensorflow")]:
        if get_backend(child).unavailable_reason() is None:
            assert zygote.parent_of(preloads.preload(child), installed) == preloads.preload(parent), child


def test_a_template_forked_from_another_imports_only_the_rest(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A zygote whose modules extend another's is a fork of that one: the module both import is imported once,
    in the parent (tests/zygote_import_marker.py notes each import's pid); a script forked from the child runs
    in a grandchild of the parent and has the module without importing it; a worker forked from it works."""
    marks = tmp_path / "marks"
    monkeypatch.setenv("CONVDIFF_TEST_IMPORT_MARKS", str(marks))  # the key holds it: these zygotes are new
    parent_modules = ("json", "tests.zygote_import_marker")
    child_modules = (*parent_modules, "torch")
    monkeypatch.setattr(preloads, "preload", lambda backend: child_modules if backend == "torch" else parent_modules)
    monkeypatch.setattr(preloads, "_installed", lambda: ("torch", "fault:segfault"))
    child = preloads.zygote_of("torch")
    parent = zygote.zygote_for(parent_modules)
    assert child is not None and parent is not None and child is not parent and child.ready() and parent.ready()
    script = tmp_path / "where.py"
    script.write_text("import os, sys\nstat = open(f'/proc/{os.getppid()}/stat').read()\n"
                      "print(os.getppid(), stat.rsplit(')', 1)[1].split()[1], 'tests.zygote_import_marker' in sys.modules)\n")
    seen = []
    for z in (parent, child):
        fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            proc = z.fork_script(str(script), fd, dict(os.environ))
        finally:
            os.close(fd)
        assert proc is not None and proc.wait(60) == 0, (tmp_path / "out").read_text()
        seen.append((tmp_path / "out").read_text().split())
    (parent_pid, _, parent_has), (child_pid, grandparent_pid, child_has) = seen
    assert grandparent_pid == parent_pid != child_pid and parent_has == child_has == "True"
    assert marks.read_text().split() == [parent_pid]  # imported once, by the parent
    w = Worker("torch", "cpu")
    try:
        assert w.ready(), w.reason
        assert isinstance(w.proc, Forked) and w.proc.zygote is child
        w.submit(CASES[0], make_inputs(CASES[0]))
        assert w.collect(120)["status"] == "ok"
    finally:
        w.stop()


def test_an_excluded_package_cannot_be_imported_and_an_imported_one_stays() -> None:
    """worker.block (Backend.excludes): `import m` then raises ImportError, the error a framework's optional
    import of m catches; a module already imported is left as it is."""
    import sys

    from harness.execution.worker import block

    assert "tabnanny" not in sys.modules and "json" in sys.modules
    json_module = sys.modules["json"]
    try:
        block(["tabnanny", "json"])
        with pytest.raises(ImportError):
            import tabnanny  # noqa: F401
        assert sys.modules["json"] is json_module
    finally:
        sys.modules.pop("tabnanny", None)


def test_a_crash_is_reported_with_its_signal_and_the_restart_is_a_fork() -> None:
    w = Worker("fault:segfault", "cpu")
    inputs = make_inputs(CASES[0])
    try:
        assert w.ready() and isinstance(w.proc, Forked)
        w.submit(CASES[0], inputs)
        w.submit(CASES[0], inputs)
        first = w.collect(60)
        assert first["status"] == "crash" and "SIGSEGV" in first["message"]
        second = w.collect(60)  # on a restarted worker: forked again, with a forked spare beside it
        assert second["status"] == "crash" and "SIGSEGV" in second["message"] and w.restarts == 1
        assert w.spare is not None and isinstance(w.spare[0], Forked)
    finally:
        w.stop()


def test_a_zygote_whose_forks_die_leaves_the_worker_to_a_fresh_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/zygote_fork_dies.py makes every fork of the process that imported it exit at once (before the
    worker could greet): the worker then starts as a fresh interpreter and works."""
    monkeypatch.setattr(preloads, "preload", lambda backend: ("tests.zygote_fork_dies",))
    monkeypatch.setenv("CONVDIFF_TEST_FORK_DIES", "1")  # a zygote of its own (the key includes the environment)
    w = Worker("torch", "cpu")
    try:
        assert w.ready(), w.reason
        assert w.fresh_only and not isinstance(w.proc, Forked)
        w.submit(CASES[0], make_inputs(CASES[0]))
        assert w.collect(120)["status"] == "ok"
    finally:
        w.stop()


def test_no_fork_while_another_thread_imports() -> None:
    """A fork made while another thread holds a module's import lock would inherit it held forever:
    the zygote waits until no other thread is inside an import (OpenVINO's telemetry thread was)."""
    import importlib._bootstrap as bootstrap
    import threading

    from harness.execution.zygote_server import imports_quiet

    lock = bootstrap._get_module_lock("convdiff_test_module_being_imported")
    held, release = threading.Event(), threading.Event()

    def importer() -> None:
        lock.acquire()
        held.set()
        release.wait()
        lock.release()

    t = threading.Thread(target=importer)
    t.start()
    held.wait()
    try:
        assert imports_quiet(timeout=0.2) is False
    finally:
        release.set()
        t.join()
    assert imports_quiet(timeout=0.2) is True


def test_a_runtime_only_setting_reuses_the_zygote_and_reaches_the_worker(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path) -> None:
    """CONVDIFF_PROFILE (RUNTIME_ONLY) changed between runs: the second worker is forked from the same
    zygote (no second framework import) and still reads the new value (its profile lands in the new dir)."""
    firsts = []
    for n in (1, 2):
        out = tmp_path / f"prof{n}"
        out.mkdir()
        monkeypatch.setenv("CONVDIFF_PROFILE", str(out))
        w = Worker("torch", "cpu")
        try:
            assert w.ready(), w.reason
            assert isinstance(w.proc, Forked)
            firsts.append(w.proc.zygote)
            w.submit(CASES[0], make_inputs(CASES[0]))
            assert w.collect(120)["status"] == "ok"
        finally:
            w.stop()
        assert [p.name.split("-")[1] for p in out.glob("worker-*.prof")] == ["torch"], list(out.iterdir())
    assert firsts[0] is firsts[1]
    monkeypatch.setenv("ONEDNN_VERBOSE", "0")  # a variable a framework may read at import: a zygote of its own
    w = Worker("torch", "cpu")
    try:
        assert w.ready(), w.reason
        assert isinstance(w.proc, Forked) and w.proc.zygote is not firsts[0]
    finally:
        w.stop()


def test_a_warm_worker_is_not_reused_under_another_runtime_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm worker's setup has read CONVDIFF_CACHE (its artifact cache): the warm pool keys on the whole
    environment, while the zygote, which has run no setup, ignores it."""
    monkeypatch.setenv("CONVDIFF_CACHE", "/one")
    pool_key, zygote_key = warm_pool.WarmPool.key("torch", "cpu"), zygote.environment_key(zygote.RUNTIME_ONLY)
    monkeypatch.setenv("CONVDIFF_CACHE", "/two")
    assert warm_pool.WarmPool.key("torch", "cpu") != pool_key
    assert zygote.environment_key(zygote.RUNTIME_ONLY) == zygote_key


def test_script_templates_hold_no_framework_the_script_does_not_import() -> None:
    """A reproducer script forks from a backend's template (tests/helpers.py SCRIPT_TEMPLATES): the heavy
    packages that template imports are the script's own, plus only those its entry declares (what the
    script's imports import anyway); a script that torch.compiles forks from torch-inductor's."""
    from tests.helpers import SCRIPT_TEMPLATES, script_template
    from tests.script_fork import HEAVY

    for modules, (backend, also) in SCRIPT_TEMPLATES.items():
        imported = {m.split(":")[0].split(".")[0] for m in preloads.preload(backend) if not m.startswith("-")} & set(HEAVY)
        assert modules <= set(HEAVY) and imported - modules == also, (sorted(modules), backend)
        assert script_template(sorted(modules), "import x\n") == backend
    assert script_template(["torch"], "cm = torch.compile(m)\n") == "torch-inductor"
    assert script_template(["torch", "torchao"], "ep = torch.export.export(m, (x,))\n") == "torch-inductor"
    assert script_template(["json"], "") is None and script_template([], "") is None


SCRIPTS = {"exits.py": "import os, sys\nprint(os.getcwd() == os.path.dirname(os.path.abspath(sys.argv[0])))\n"
                       "print('to stderr', file=sys.stderr)\nsys.exit(3)\n",
           "raises.py": "raise ValueError('no')\n",
           "message.py": "import sys\nsys.exit('a message')\n",
           "killed.py": "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n",
           "main.py": "print(__name__, flush=True)\n"}


def test_a_script_forked_from_a_zygote_exits_and_prints_as_a_fresh_python_does(tmp_path) -> None:
    """A ("script", ...) request (harness/execution/scripts.py): exit status (SystemExit's code, 1 for an
    uncaught exception or a message, -N for a signal), stdout and stderr in one file, the working directory
    beside the script (as the tests' script runners give it), run as __main__: each as `python script.py`
    gives them."""
    import os
    import subprocess
    import sys

    z = zygote.zygote_for(("json",))
    assert z is not None and z.ready()
    for name, source in SCRIPTS.items():
        path = tmp_path / name
        path.write_text(source)
        fresh = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True)
        fd = os.open(tmp_path / f"{name}.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            proc = z.fork_script(str(path), fd, dict(os.environ))
        finally:
            os.close(fd)
        assert isinstance(proc, Forked)
        assert proc.wait(60) == fresh.returncode, name
        lines = lambda text: sorted(ln for ln in text.splitlines() if not ln.startswith(" "))  # noqa: E731 - less a traceback's frames (runpy's)
        assert lines((tmp_path / f"{name}.out").read_text()) == lines(fresh.stdout + fresh.stderr), name


MODULE = ("import os, sys\n"
          "print(sys.argv[1:], sys.argv[0] == __file__, __name__)\n"
          "print(sys.path[0] == os.getcwd())\n"
          "sys.exit(4)\n")


def test_a_module_forked_from_a_zygote_runs_as_python_m_does(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module request (`convdiff extract`'s probes): `python -m name args...` in the caller's working
    directory, which comes first on sys.path, the module found through the PYTHONPATH of the environment
    the request carries (the zygote started without it), argv[0] the module's file: output and exit status
    as a fresh `python -m` gives them (hand-derived below)."""
    import subprocess
    import sys

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "argv_probe.py").write_text(MODULE)
    env = {**os.environ, "PYTHONPATH": str(lib)}
    args = ("a", "b c")
    want = "['a', 'b c'] True __main__\nTrue\n"
    fresh = subprocess.run([sys.executable, "-m", "argv_probe", *args], cwd=tmp_path, env=env, capture_output=True,
                           text=True)
    assert (fresh.returncode, fresh.stdout + fresh.stderr) == (4, want)
    z = zygote.zygote_for(("json",))
    assert z is not None and z.ready()
    monkeypatch.chdir(tmp_path)
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        proc = z.fork_script("argv_probe", fd, env, args, module=True)
    finally:
        os.close(fd)
    assert isinstance(proc, Forked)
    assert (proc.wait(60), (tmp_path / "out").read_text()) == (4, want)


def test_a_one_off_fork_starts_no_template_outside_a_session(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """session_zygote: outside an xdist session, and in a process a test started whose session runs no
    template for these modules, None (a template started for one fork costs the import it saves)."""
    from harness.execution import shared

    monkeypatch.setattr(shared, "_ADOPTED", [])
    monkeypatch.delenv(shared.SHARED_ENV, raising=False)
    assert zygote.session_zygote(("json",)) is None
    (tmp_path / shared.OWNER_FILE).write_text(str(os.getpid()))
    monkeypatch.setenv(shared.SHARED_ENV, str(tmp_path))
    assert shared.inherited() == tmp_path
    assert zygote.session_zygote(("json",)) is None


AUTOGRAPH_LIKE = ("import atexit, importlib.util, os, sys, tempfile\n"  # what autograph's loader does per function
                  "with tempfile.NamedTemporaryFile('w', suffix='.py', prefix='__autograph_generated_file',\n"
                  "                                 dir=sys.argv[1], delete=False) as f:\n"
                  "    f.write('X = 1\\n')\n"
                  "atexit.register(os.remove, f.name)\n"
                  "name = os.path.basename(f.name)[:-3]\n"
                  "spec = importlib.util.spec_from_file_location(name, f.name)\n"
                  "sys.modules[name] = module = importlib.util.module_from_spec(spec)\n"
                  "spec.loader.exec_module(module)\n"
                  "print(module.X)\n")


def sources(folder) -> list:
    """What a script left in `folder`, its bytecode cache aside (written where PYTHONDONTWRITEBYTECODE is unset, as
    make test leaves it)."""
    return [p for p in folder.iterdir() if p.name != "__pycache__"]


def test_a_forked_child_removes_the_generated_sources_a_fresh_python_removes_at_exit(tmp_path) -> None:
    """TensorFlow autograph writes each converted function's source to a temp file and deletes it from an
    exit handler, which a forked child's os._exit skips: the child deletes the files it wrote itself, so
    `/tmp` keeps none, as after a fresh `python script.py`; a file the template's module table already
    names is the template's and stays."""
    import subprocess
    import sys

    from harness.execution import scripts

    script = tmp_path / "autograph_like.py"
    script.write_text(AUTOGRAPH_LIKE)
    for name in ("fresh", "forked"):
        (tmp_path / name).mkdir()
    fresh = subprocess.run([sys.executable, str(script), str(tmp_path / "fresh")], capture_output=True, text=True)
    assert (fresh.returncode, fresh.stdout, sources(tmp_path / "fresh")) == (0, "1\n", [])
    z = zygote.zygote_for(("json",))
    assert z is not None and z.ready()
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        proc = z.fork_script(str(script), fd, dict(os.environ), (str(tmp_path / "forked"),))
    finally:
        os.close(fd)
    assert isinstance(proc, Forked)
    assert (proc.wait(60), (tmp_path / "out").read_text(), sources(tmp_path / "forked")) == (0, "1\n", [])
    kept = tmp_path / f"{scripts.AUTOGRAPH_PREFIX}kept.py"  # named before: not this process's to delete
    kept.write_text("")
    module = type(sys)(kept.stem)
    module.__file__ = str(kept)
    sys.modules[kept.stem] = module
    try:
        scripts.remove_generated_sources(scripts.generated_sources())
        assert kept.exists()
        scripts.remove_generated_sources(frozenset())
        assert not kept.exists()
    finally:
        del sys.modules[kept.stem]

