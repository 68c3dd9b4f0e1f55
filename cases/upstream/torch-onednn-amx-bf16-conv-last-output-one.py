"""CPU bfloat16 conv2d/conv3d on AMX (oneDNN brgemm) is wrong when the last output length is 1 with a last stride > 1

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/uxlfoundation/oneDNN/pull/5494 (brgemm conv AMX wrong results for stride > kernel, merged 2026-07, backported to oneDNN v3.13 in #5568: possibly the same root cause; torch 2.13.0 bundles oneDNN 3.12.0); https://github.com/pytorch/pytorch/issues/169688 (CPU bfloat16 convolutions with stride 3 inaccurate)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch and uxlfoundation/oneDNN issues for "bfloat16 conv3d AMX wrong", "brg_conv_fwd amx bfloat16 incorrect", "oneDNN brgemm convolution stride output 1"

What happens: on CPUs with AMX (Sapphire Rapids), torch 2.13.0's oneDNN brgemm convolution
(brg_conv_fwd:avx10_1_512_amx) returns wrong bfloat16 conv2d/conv3d results when the last spatial output length is 1
with a last stride > 1 and a last kernel >= 2: batch 2, 3 -> 2 channels, input 4x3x3, kernel 1x1x2, stride (1, 1, 3)
gives a relative error of 1.87 against the float64 result (measured 2026-11 on a Sapphire Rapids host); with
ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 or AVX2 the error is about 2e-3, bfloat16 rounding. float32, float16 and
conv_transpose are unaffected (sweeps of 2,500 + 600 shapes); shapes for which oneDNN picks another kernel pass.

Expected: the float64 convolution of the same bfloat16 inputs within bfloat16 rounding (relative error ~1e-2 at most);
the script computes it with NumPy.

Mechanism: not known beyond the kernel: the error follows oneDNN's brg_conv_fwd AMX implementation (the script reads
the kernel name from oneDNN's verbose log); other ISAs of the same build are right. oneDNN PR #5494 fixed an AMX
brgemm conv input buffer sized with min(kernel, stride) (src/cpu/x64/jit_brgemm_conv_utils.cpp, get_inp_size) for
stride > kernel in H/D; this case has stride 3 > kernel 2 in W, so it may be the same defect (not verified: no AMX
host here).

Host: CPUs with AMX-BF16 where oneDNN runs brg_conv_fwd with an AMX ISA (not capped by ONEDNN_MAX_CPU_ISA).
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
