"""torch.compile: depthwise ConvTranspose1d on CPU fails inductor's output stride assert when ATen takes the slow transposed-conv path

Measures: a depthwise ConvTranspose1d(4, 4, 2, groups=4) on a batch-2, length-1 channels-last input in
bfloat16/float16: the conv backend torch picks, the output strides of eager, meta and FakeTensor, and the inductor-
compiled module's error or result against float64. Exit 1 when the compiled module fails; 0 with 'not shown on this
host' where oneDNN runs both dtypes (run it under ONEDNN_MAX_CPU_ISA=AVX2).
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
