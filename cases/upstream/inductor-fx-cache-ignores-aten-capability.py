# inductor's FX graph cache key leaves out the vector ISA the C++ is generated for (on CPU its system
# info is empty): a hit returns the source written for one ISA, which is then compiled with the flags of
# the ISA picked now (pick_vec_isa follows ATEN_CPU_CAPABILITY and the CPU). Here the cached kernel
# steps 16 floats per iteration (AVX-512) but is built with 8-lane AVX2 vectors, so half of the output
# is never written: garbage (convdiff, 2026-11: 10 of 90 smoke results, up to 1e36 and NaN). The other
# way, source vectorized for avx2 built under ATEN_CPU_CAPABILITY=default fails to compile
# ("'at::vec' has not been declared"; 18 of 90 smoke results). A machine with another CPU reading a
# shared or copied cache meets the same. Needs an AVX-512 CPU. Same class as pytorch/pytorch#167463
# (thread count missing from the key, fixed by #185049).
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
