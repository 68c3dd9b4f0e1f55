"""Quantized Conv1d/2d/3d under qnnpack crash (SIGSEGV) where the kernel overhangs the input by less than a stride

Measures: qnnpack Conv1d in a child process: input 3, kernel 5, stride 3 (an internal assert) and input 4, kernel 5,
stride 2 (the child's exit signal). Exit 1 when the child dies by a signal.
"""
import subprocess
import sys
import warnings

import numpy as np

# (input n, kernel k, stride s, rank): floor length 0, C truncation 1. The child runs them in this order and the
# crash ends it, so the case that raises comes first.
CASES = [(3, 5, 3, 1), (4, 5, 2, 1)]


def child() -> None:
    """Run the overhanging quantized convs under qnnpack, printing each result before the next."""
    import torch
    import torch.ao.nn.quantized as nnq
    warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}", flush=True)
    if "qnnpack" not in torch.backends.quantized.supported_engines:
        print("no qnnpack", flush=True)
        return
    torch.backends.quantized.engine = "qnnpack"
    for n, k, s, rank in CASES:
        ones = (1,) * (rank - 1)
        m = (nnq.Conv1d, nnq.Conv2d, nnq.Conv3d)[rank - 1](1, 1, ones + (k,), stride=ones + (s,), bias=False)
        w = torch._make_per_tensor_quantized_tensor(torch.ones((1, 1) + ones + (k,), dtype=torch.int8), 1.0, 0)
        m.set_weight_bias(w, None)
        m.scale, m.zero_point = 1.0, 0
        x = np.arange(1, n + 1, dtype=np.uint8).reshape((1, 1) + ones + (n,))
        print(f"qnnpack conv{rank}d input {n}, kernel {k}, stride {s} (length floor {(n - k) // s + 1}, C truncation "
              f"{int((n - k) / s) + 1}): ", end="", flush=True)
        try:
            y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), 1.0, 0))
            print(f"returns shape {tuple(y.shape)}, y = {y.int_repr().flatten().tolist()}", flush=True)
        except RuntimeError as exc:
            print("raises " + " ".join(str(exc).split())[:100], flush=True)


def main() -> int:
    p = subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True, timeout=300)
    out = p.stdout
    if p.returncode < 0:
        out += f"process killed by signal {-p.returncode} (SIGSEGV is 11)"
    print(out.rstrip() or f"child exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
    if "no qnnpack" in out:
        print("not shown on this host: the qnnpack quantized engine is not built in")
        return 0
    return 1 if p.returncode < 0 else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        child()
        sys.exit(0)
    sys.exit(main())
