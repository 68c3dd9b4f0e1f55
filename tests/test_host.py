"""Host facts: parsed from /proc/cpuinfo, read live from each framework's worker, keyed for baselines."""

from __future__ import annotations

import pytest

from harness.execution import host
from harness.execution.pool import Worker
from harness.execution.worker import plain_facts

CPUINFO = """\
processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Example CPU @ 2.00GHz
flags\t\t: fpu sse4_2 avx f16c fma avx2 avx512f avx512bw amx_tile amx_bf16 rdrand

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Example CPU @ 2.00GHz
flags\t\t: fpu
"""


def test_cpu_facts_from_cpuinfo(tmp_path, monkeypatch):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO)
    monkeypatch.setattr(host, "CPUINFO", str(path))
    host.cpu_facts.cache_clear()
    try:
        facts = host.cpu_facts()
    finally:
        host.cpu_facts.cache_clear()
    assert facts["cpu_vendor"] == "GenuineIntel" and facts["cpu_model"] == "Example CPU @ 2.00GHz"
    # only the kernel-selecting flags, in ISA_FLAGS order, from the first processor
    assert facts["cpu_flags"] == ["sse4_2", "avx", "f16c", "fma", "avx2", "avx512f", "avx512bw", "amx_tile", "amx_bf16"]


def test_host_key_ignores_counts_but_not_decisions():
    a = {"cpu_flags": ["avx2"], "tf_onednn": False, "cores": 2, "tf_threads": 0}
    assert host.host_key(a) == host.host_key({**a, "cores": 64, "tf_threads": 8})
    assert host.host_key(a) != host.host_key({**a, "tf_onednn": True})
    keys = host.target_host_keys({"cpu_flags": ["avx2"]}, {"torch-cpu": {"torch_cpu_capability": "AVX2"}},
                                 ["torch-cpu", "tvm-cpu"])
    assert keys["torch-cpu"] != keys["tvm-cpu"]


def test_plain_facts_are_builtin_types():
    class Version(str):
        pass

    out = plain_facts({"a": Version("2.1"), "b": True, "c": 3, "d": ("x", Version("y")), "e": None})
    assert out == {"a": "2.1", "b": True, "c": 3, "d": ["x", "y"], "e": "None"}
    assert type(out["a"]) is str and type(out["b"]) is bool and all(type(x) is str for x in out["d"])


def _facts(backend: str) -> dict:
    w = Worker(backend, "cpu")
    try:
        if not w.ready():
            pytest.skip(f"{backend}: {w.reason}")
        return w.host
    finally:
        w.stop()


# forced on: a fresh TensorFlow worker (6.0 s of make test's 488.6 s, 2026-12-02, 2-core AMD EPYC Zen 5); the state a
# host gives by default is read by every TensorFlow case item whose known issue selects on tf_onednn
@pytest.mark.parametrize("setting,want", [("0", False), pytest.param("1", True, marks=pytest.mark.nightly(
    "a second fresh TensorFlow worker; forcing oneDNN off stays in make test"))])
def test_tensorflow_reports_its_live_onednn_state(monkeypatch, setting, want):
    """TF_ENABLE_ONEDNN_OPTS=0/1 force oneDNN off/on (TF's documented switch); the fact is TF's own answer."""
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", setting)
    facts = _facts("tensorflow")
    assert facts["tf_onednn"] is want
    assert isinstance(facts["tf_bf16_conv"], bool) and isinstance(facts["tf_f16_conv"], bool)


def test_torch_reports_its_live_cpu_capability(monkeypatch):
    """ATEN_CPU_CAPABILITY=default makes ATen dispatch its portable kernels (documented)."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    facts = _facts("torch")
    assert facts["torch_cpu_capability"] == "DEFAULT"
    assert facts["torch_threads"] >= 1 and facts["torch_onednn_version"].count(".") >= 1
    assert set(facts) <= set(host.FACTS)


def test_onednn_kernel_isa_is_read_from_its_verbose_exec_line():
    """oneDNN's verbose format: primitive,exec,<engine>,<kind>,<impl>:<isa>,...; info lines are skipped."""
    from backends.torch.onednn_probe import kernel_isa

    log = ("onednn_verbose,v1,info,cpu,isa:Intel AVX2\n"
           "onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:s8::blocked:abcd::f0,,4x4x3x3,0.01\n"
           "onednn_verbose,v1,primitive,exec,cpu,convolution,jit_uni_int8_1x1:avx2,forward_inference,src:u8,,mb1,0.02\n")
    assert kernel_isa(log) == "avx2"
    assert kernel_isa(log.replace("jit_uni_int8_1x1:avx2", "brgconv:avx10_1_512_amx")) == "avx10_1_512_amx"
    assert kernel_isa(log.splitlines()[0]) == "none"


def test_torch_ao_reports_the_onednn_kernel_it_ran(monkeypatch):
    """ONEDNN_MAX_CPU_ISA=AVX2 caps oneDNN at AVX2 (documented), which has no VNNI; fbgemm is not oneDNN."""
    from backends.torch.onednn_probe import NO_VNNI_ISAS

    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert _facts("torch-ao-onednn")["torch_onednn_int8_isa"] in NO_VNNI_ISAS
    assert _facts("torch-ao-fbgemm")["torch_onednn_int8_isa"] == "none"


@pytest.mark.nightly("a fresh inductor worker (7.5 s of make test's 488.6 s, 2026-12-02, 2-core AMD EPYC Zen 5) for a "
                     "fact no known issue selects on; ATEN_CPU_CAPABILITY reaching a worker is "
                     "test_torch_reports_its_live_cpu_capability's")
def test_inductor_reports_the_vector_isa_it_compiles_for(monkeypatch):
    """Under ATEN_CPU_CAPABILITY=default inductor emits scalar C++ (pick_vec_isa honours it)."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    facts = _facts("torch-inductor")
    assert facts["inductor_vec_isa"] == "none" and facts["torch_cpu_capability"] == "DEFAULT"


def test_every_known_issue_host_selector_names_a_fact():
    from pathlib import Path

    from harness.judge.known_issues import load_known_issues

    known = load_known_issues(Path(__file__).resolve().parents[1] / "cases" / "known_issues.yaml")
    assert all(set(e.host) <= set(host.FACTS) for e in known.entries)
    assert any(e.host for e in known.entries)
