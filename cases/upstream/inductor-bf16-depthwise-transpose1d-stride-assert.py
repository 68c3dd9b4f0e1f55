"""torch.compile: depthwise ConvTranspose1d on CPU fails inductor's output stride assert when ATen takes the slow transposed-conv path

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/143121 (assert_size_stride on Conv1d with a strided input); https://github.com/pytorch/pytorch/issues/123242 (Conv1d AssertionError); https://github.com/pytorch/pytorch/issues/136837 (CPU conv stride assert); https://github.com/pytorch/pytorch/issues/184026 (conv_transpose2d stride prediction mismatch, CUDA)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "assert_size_stride conv_transpose1d", "FakeTensor convolution wrong strides slow_conv_transpose2d", "ConvTranspose1d groups bfloat16 expected size stride"

What happens: a depthwise ConvTranspose1d (4 channels, groups 4, kernel 2, no bias) in bfloat16 or float16, batch 2,
applied to an input of length 1 laid out as (N, L, C) and moved to (N, C, L) (strides (4, 1, 4): both contiguous and
channels-last), compiles under inductor but fails at run time: "AssertionError: expected size 4==4, stride 2==1 at
dim=1; expected size 2==2, stride 1==4 at dim=2". Eager runs it. Where oneDNN has bfloat16/float16 kernels for the
CPU the same module compiles and runs. Measured on an AVX-512 Xeon under ONEDNN_MAX_CPU_ISA=AVX2 (and on an AVX2-only
AMD EPYC): batch 1 runs, groups 1, groups 2 and 4 -> 8 channels groups 4 run, an input of length 2 runs; freezing on or
off alike. The same failure shows in float32 on any CPU with torch.backends.mkldnn.flags(enabled=False).

Expected: the compiled module returns what eager returns (the transposed convolution; the script checks it against a
float64 NumPy reference), with whatever strides the eager kernel produces.

Mechanism: without oneDNN for the dtype, torch._C._select_conv_backend picks SlowTranspose2d. FakeTensor's conv rule
(torch/_subclasses/fake_impls.py conv() -> torch._C._conv_determine_backend_memory_format, which for SlowTranspose2d
answers channels_last when the input or weight suggests it) predicts the output strides (8, 1, 4). Eager (ATen's grouped
slow transposed conv in aten/src/ATen/native/Convolution.cpp) returns contiguous (8, 2, 1) for batch 2 (channels-last
(8, 1, 4) for batch 1), and the meta kernel also returns (8, 2, 1). Inductor trusts the fake strides for the extern
convolution's output and its assert_size_stride fails.

Host: CPUs where oneDNN has no bfloat16 kernels (no AVX-512, e.g. AVX2-only CPUs, or ONEDNN_MAX_CPU_ISA=AVX2); float16
also where oneDNN has no float16 kernels (no AVX512-FP16/AMX-FP16).
"""
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
C, K, BATCH = 4, 2, 2


def backend(x: torch.Tensor, w: torch.Tensor) -> str:
    """torch's choice of convolution backend (an internal API: where it is missing, inferred from oneDNN's support)."""
    try:
        b = torch._C._select_conv_backend(x, w, None, [1], [0], [1], True, [0], C, None)
    except Exception:  # noqa: BLE001 - internal API, may change
        mkldnn = torch.ops.mkldnn
        ok = mkldnn._is_mkldnn_bf16_supported() if x.dtype == torch.bfloat16 else mkldnn._is_mkldnn_fp16_supported()
        return "oneDNN (assumed)" if ok else "SlowTranspose2d"
    name = str(b).rpartition(".")[2]
    return name if name != "???" else f"value {int(b)} (unnamed in torch._C._ConvBackend, not a slow path)"


def fake_strides(x: torch.Tensor, w: torch.Tensor) -> tuple:
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        return torch.nn.functional.conv_transpose1d(mode.from_tensor(x), mode.from_tensor(w), groups=C).stride()


def main() -> int:
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, oneDNN bfloat16 "
          f"{torch.ops.mkldnn._is_mkldnn_bf16_supported()}, oneDNN float16 {torch.ops.mkldnn._is_mkldnn_fp16_supported()}")
    rng = np.random.default_rng(0)
    x64 = rng.uniform(-1, 1, (BATCH, 1, C))  # (N, L, C) with L = 1
    w64 = rng.uniform(-1, 1, (C, 1, K))
    chosen = None
    for dtype in (torch.bfloat16, torch.float16):
        x = torch.from_numpy(x64).to(dtype).movedim(-1, 1)  # (N, C, L) view with the strides of (N, L, C)
        w = torch.from_numpy(w64).to(dtype)
        name = backend(x, w)
        print(f"{dtype}: conv backend {name}")
        if name == "SlowTranspose2d" and chosen is None:
            chosen = (dtype, x, w)
    if chosen is None:
        print("not shown on this host: oneDNN runs bfloat16 and float16 transposed convs here (no SlowTranspose2d)")
        return 0
    dtype, x, w = chosen
    xd, wd = x.double().numpy(), w.double().numpy()
    ref = np.zeros((BATCH, C, 1 + K - 1))
    for j in range(K):  # depthwise transposed conv, input length 1: y[n, c, j] = x[n, c, 0] * w[c, 0, j]
        ref[:, :, j] += xd[:, :, 0] * wd[:, 0, j]
    eager = torch.nn.functional.conv_transpose1d(x, w, groups=C)
    meta = torch.nn.functional.conv_transpose1d(x.to("meta"), w.to("meta"), groups=C)
    print(f"{dtype}, batch {BATCH}, input {tuple(x.shape)} strides {x.stride()}: output strides eager {eager.stride()}, "
          f"meta {meta.stride()}, FakeTensor {fake_strides(x, w)}")
    print(f"eager max |y - float64 reference| = {np.abs(eager.double().numpy() - ref).max():.3g}")
    m = torch.nn.ConvTranspose1d(C, C, K, groups=C, bias=False).eval().to(dtype)
    with torch.no_grad():
        m.weight.copy_(w)
        try:
            y = torch.compile(m, backend="inductor", fullgraph=True)(x)
        except AssertionError as exc:
            print(f"compiled: AssertionError: {str(exc).splitlines()[0][:160]}")
            return 1
        except Exception as exc:  # noqa: BLE001 - another failure is a result too
            print(f"compiled: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
            return 1
    err = np.abs(y.double().numpy() - ref).max()
    print(f"compiled ran: strides {y.stride()}, max |y - float64 reference| = {err:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
