"""CPU bfloat16 conv2d/conv3d on AMX (oneDNN brgemm) is wrong when the last output length is 1 with a last stride > 1

Measures: bfloat16 conv3d, batch 2, 3 -> 2, input 4x3x3, kernel 1x1x2, stride (1, 1, 3) (last output length 1) against
float64, with the oneDNN kernel that ran (its verbose log). Exit 1 when the relative error exceeds 0.05; 0 with 'not
shown on this host' where oneDNN runs no AMX brgemm kernel.
"""
import ctypes
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F


def onednn_log(fn):
    """Run fn with oneDNN's verbose log on; return (result, log). oneDNN prints with C stdio to fd 1."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
                result = fn()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return result, tmp.read().decode(errors="replace")


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"AMX tile (cpuinfo): {torch.cpu._is_amx_tile_supported()}")
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((2, 3, 4, 3, 3))).bfloat16()
    w = torch.from_numpy(rng.standard_normal((2, 3, 1, 1, 2))).bfloat16()
    xd, wd = x.double().numpy(), w.double().numpy()
    # float64 reference: stride (1, 1, 3), kernel (1, 1, 2): the last output length is (3 - 2) // 3 + 1 = 1
    ref = np.einsum("ncdhk,ock->nodh", xd[..., 0:2], wd[:, :, 0, 0, :])[..., None]
    y, log = onednn_log(lambda: F.conv3d(x, w, stride=(1, 1, 3)))
    y = y.double().numpy()
    impls = [f[f.index("convolution") + 1] for f in (line.split(",") for line in log.splitlines())
             if "exec" in f and "convolution" in f]
    rel = float(np.abs(y - ref).max() / np.abs(ref).max())
    print(f"conv3d bfloat16, batch 2, 3 -> 2, input 4x3x3, kernel 1x1x2, stride (1, 1, 3): output {y.shape} "
          f"(expected {ref.shape}); oneDNN kernel {impls[:1] or ['none (not oneDNN)']}; relative error vs float64 "
          f"{rel:.3g}")
    if rel > 0.05:
        return 1
    if not any("amx" in i for i in impls):
        print("not shown on this host: oneDNN does not run this conv with an AMX brgemm kernel here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
