"""torch.ao quantized Conv1d with a kernel longer than the input (VALID): the output length (n - k) / s + 1 is
computed with C truncating division, so an overhang shorter than the stride gives length 1 instead of an error
(float F.conv1d raises). fbgemm and x86 return length 1; onednn also returns an empty tensor one step further
(truncated length 0); qnnpack dies with SIGSEGV, so each engine runs in its own process."""
import subprocess
import sys

import numpy as np
import torch
import torch.ao.nn.quantized as nnq

CASES = [(4, 5, 2), (3, 5, 3), (2, 3, 1), (4, 7, 2)]  # (input n, kernel k, stride s): floor length 0, 0, 0, -1


def run(engine: str, n: int, k: int, s: int) -> str:
    torch.backends.quantized.engine = engine
    m = nnq.Conv1d(1, 1, k, stride=s, bias=False)
    m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.ones((1, 1, k), dtype=torch.int8), 1.0, 0), None)
    m.scale, m.zero_point = 1.0, 0
    x = np.array([[[1, 2, 4, 8, 16, 32][:n]], [[16, 32, 64, 128, 3, 5][:n]]], dtype=np.uint8)  # batch 2
    try:
        y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), 1.0, 0))
    except Exception as e:  # noqa: BLE001
        return "raises: " + str(e).splitlines()[0][:70]
    return f"shape {tuple(y.shape)}, y = {y.int_repr().flatten().tolist()} (in-range sums {x.sum(axis=2).ravel().tolist()})"


if len(sys.argv) > 1:
    print(run(sys.argv[1], *map(int, sys.argv[2:])))
    sys.exit()
print("torch", torch.__version__, "engines", torch.backends.quantized.supported_engines)
for n, k, s in CASES:
    try:
        torch.nn.functional.conv1d(torch.ones(1, 1, n), torch.ones(1, 1, k), stride=s)
        ref = "float F.conv1d runs"
    except RuntimeError:
        ref = "float F.conv1d raises"
    print(f"conv1d n={n} k={k} s={s}: truncated length {(n - k) // s + 1 if n >= k else int((n - k) / s) + 1}, {ref}")
    for engine in ("fbgemm", "x86", "onednn", "qnnpack"):
        if engine in torch.backends.quantized.supported_engines:
            p = subprocess.run([sys.executable, __file__, engine, str(n), str(k), str(s)], capture_output=True, text=True)
            print(f"  {engine:8s}", p.stdout.strip() or f"process died, exit {p.returncode} (SIGSEGV = -11)")
