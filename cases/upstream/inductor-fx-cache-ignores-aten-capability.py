"""Inductor's FX graph cache key leaves out the CPU vector ISA: code cached under one ATen CPU capability is reused under another

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/167463 (CPU thread count missing from the FX graph cache key, fixed by https://github.com/pytorch/pytorch/pull/185049); https://github.com/pytorch/pytorch/pull/184444 (the same, thread specialization)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "FX graph cache key vec isa", "ATEN_CPU_CAPABILITY inductor cache", "inductor cache different CPU garbage"

What happens: compile a module with torch.compile (inductor, freezing) on an AVX-512 CPU, then compile the same module
in another process with ATEN_CPU_CAPABILITY=avx2 and the same TORCHINDUCTOR_CACHE_DIR. The second process hits the FX
graph cache and gets the C++ source generated for AVX-512 (16 floats per vector step), which it then builds with the
flags of the ISA it picks now (AVX2, 8-lane vectors): half of each vector step is never written and the output is
garbage (convdiff, 2026-11: 10 of 90 smoke results, up to 1e36 and NaN). The other way round, source vectorized for
AVX2 built under ATEN_CPU_CAPABILITY=default fails to compile ("'at::vec' has not been declared"; 18 of 90 smoke
results). With a fresh cache the AVX2 run is right. A machine with another CPU reading a shared or copied cache meets
the same.

Expected: the cache key covers what the generated code depends on, here the vector ISA inductor picks (pick_vec_isa,
which follows ATEN_CPU_CAPABILITY and the CPU), so the second process recompiles; its output then equals eager. The
script checks each run against a float64 NumPy convolution.

Mechanism: the FX graph cache key (torch/_inductor/codecache.py, FxGraphHashDetails) has no CPU vector ISA in it (on CPU
its system info is empty), while the C++ kernel source is specialized to the picked VecISA's vector width and the build
flags come from the ISA picked at load time.

Host: CPUs with AVX-512 (so that ATEN_CPU_CAPABILITY=avx2 picks another ISA).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

CHILD = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np, torch, torch._inductor.config as cfg
torch.manual_seed(0)
m = torch.nn.Conv1d(3, 4, 4, padding="same").eval()
x = torch.randn(2, 3, 9)
with torch.no_grad(), cfg.patch(freezing=True):
    try:
        y = torch.compile(m, backend="inductor", fullgraph=True)(x).double().numpy().tolist()
        error = None
    except Exception as exc:
        y, error = None, f"{type(exc).__name__}: " + " ".join(str(exc).split())[:160]
from torch._inductor.cpu_vec_isa import pick_vec_isa
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "vec_isa": str(pick_vec_isa()),
                  "x": x.double().numpy().tolist(), "w": m.weight.detach().double().numpy().tolist(),
                  "b": m.bias.detach().double().numpy().tolist(), "y": y, "error": error}))
"""


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float64 conv1d, padding 'same' for kernel 4 (torch pads 1 left, 2 right)."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 2)))
    return np.stack([np.einsum("ncl,oc->nol", xp[:, :, t:t + x.shape[2]], w[:, :, t]) for t in range(w.shape[2])]).sum(0) \
        + b.reshape(1, -1, 1)


def run(cache: str, capability: str | None) -> dict:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
    env.pop("ATEN_CPU_CAPABILITY", None)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": f"child exit {p.returncode}: {p.stderr.strip()[-160:]}"}


def main() -> int:
    import torch
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}")
    if torch.backends.cpu.get_cpu_capability() != "AVX512":
        print("not shown on this host: needs an AVX-512 CPU (and no ATEN_CPU_CAPABILITY cap) so that avx2 is another ISA")
        return 0
    wrong = 0
    with tempfile.TemporaryDirectory() as cache:
        for capability in (None, "avx2"):
            r = run(cache, capability)
            label = f"ATEN_CPU_CAPABILITY={capability or '(unset)'}, shared cache"
            if r.get("y") is None:
                print(f"{label}: {r.get('error')}")
                wrong += capability is not None
                continue
            ref = reference(np.array(r["x"]), np.array(r["w"]), np.array(r["b"]))
            err = float(np.nan_to_num(np.abs(np.array(r["y"]) - ref), nan=np.inf).max())
            print(f"{label}: capability {r['capability']}, vec isa {r['vec_isa']}: max |y - float64 reference| = "
                  f"{err:.3g}")
            wrong += err > 1e-4
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
