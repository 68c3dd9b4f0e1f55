# inductor's caches are not keyed by ATen's CPU capability: code cached under the host's default
# (AVX-512 here) and loaded by a process with ATEN_CPU_CAPABILITY=avx2 returns garbage
# (convdiff, 2026-11: 10 of 90 smoke results, up to 1e36 and NaN). Needs an AVX-512 CPU.
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import torch, torch._inductor.config as cfg
torch.manual_seed(0)
m = torch.nn.Conv1d(3, 4, 4, padding="same").eval()
x = torch.randn(2, 3, 9)
with torch.no_grad(), cfg.patch(freezing=True):
    y = torch.compile(m, backend="inductor", fullgraph=True)(x)
    print(torch.backends.cpu.get_cpu_capability(), f"max|y - eager| = {(y - m(x)).abs().max().item():.3g}")
"""
with tempfile.TemporaryDirectory() as cache:
    for capability in (None, "avx2"):
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
        if capability:
            env["ATEN_CPU_CAPABILITY"] = capability
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
        print(f"ATEN_CPU_CAPABILITY={capability or '(default)'}: {(out.stdout or out.stderr).strip().splitlines()[-1]}")
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2"}
    with tempfile.TemporaryDirectory() as fresh:
        env["TORCHINDUCTOR_CACHE_DIR"] = fresh
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
        print(f"ATEN_CPU_CAPABILITY=avx2, fresh cache: {(out.stdout or out.stderr).strip().splitlines()[-1]}")
