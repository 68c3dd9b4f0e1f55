"""Inductor's FX graph cache key leaves out the CPU vector ISA: C++ generated for AVX-512 is reused under ATEN_CPU_CAPABILITY=avx2 and computes garbage

Kind: wrong-value
Ask: A fix: put the vector ISA inductor picks (pick_vec_isa) into the FX graph cache key, so that a process under another ISA recompiles.

What happens: A frozen Conv1d(3, 4, 4, padding="same") compiled on an AVX-512 CPU writes the FX graph cache (its asymmetric pad is a generated C++ loop). Compiled again in a second process with ATEN_CPU_CAPABILITY=avx2 and the same TORCHINDUCTOR_CACHE_DIR, it hits that entry and builds source for 16-float vectors with AVX2 flags: half of each vector step is never written, 1.1 to 4.7e23 off eager (2026-11-29, AMD EPYC Zen 4). Source generated for AVX2 and read under ATEN_CPU_CAPABILITY=default fails to build ("'at::vec' has not been declared").

Expected: The cache key covers what the generated code depends on, so the second process recompiles and matches eager, as with a fresh cache (or a cache copied to another CPU).

Mechanism: torch/_inductor/codecache.py (torch 2.13.0), FxGraphHashDetails: on CPU the system info in the key is empty, while the kernel source is specialized to the vector width of pick_vec_isa() (torch/_inductor/cpu_vec_isa.py, which follows the CPU and ATEN_CPU_CAPABILITY) and the build flags come from the ISA picked when it is loaded.
"""
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp())  # one cache, shared by the two runs below
if len(sys.argv) == 1:  # run 1 under the CPU's own ISA writes the cache; run 2 under AVX2 reads it
    subprocess.run([sys.executable, __file__, "CPU's own ISA"])
    sys.exit(subprocess.run([sys.executable, __file__, "avx2"], env={**os.environ, "ATEN_CPU_CAPABILITY": "avx2"}).returncode)
import torch
torch.manual_seed(0)
m, x = torch.nn.Conv1d(3, 4, 4, padding="same").eval(), torch.randn(2, 3, 9)
with torch.no_grad(), torch._inductor.config.patch(freezing=True):
    try:
        err = (torch.compile(m)(x) - m(x)).abs().max().item()
    except Exception as e:  # noqa: BLE001 - a build failure is the other face of the defect
        err = float("inf")
        print(type(e).__name__, str(e).splitlines()[0][:200])
print(f"torch {torch.__version__}, {sys.argv[1]}: ATen {torch.backends.cpu.get_cpu_capability()}, max |compiled - eager| = {err:.3g}")
sys.exit(1 if not err <= 1e-4 else 0)
