"""XNNPACK delegate accumulates float16 convolutions in float16 on x86 CPUs with AVX512-FP16

Measures: the delegate's float16 accumulation live (a 1x1 conv of 2048 and eight 1s: 2048 with float16 accumulation,
2056 with float32), then a float16 Conv2d(16, 4, 3, padding=1) on positive data lowered with XnnpackPartitioner, in
float16 ulps against float64, beside eager torch. Exit 1 where the delegate accumulates in float16 (x86 CPUs with
AVX512-FP16); elsewhere 'not shown on this host', exit 0.
"""
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def conv2d_ref(x, w, pad):
    """float64 cross-correlation, stride 1, symmetric padding."""
    x = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    y = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for p in range(kh):
        for q in range(kw):
            y += np.einsum("nchw,oc->nohw", x[:, :, p:p + y.shape[2], q:q + y.shape[3]], w[:, :, p, q])
    return y


def ulps(y, ref):
    """|y - ref| in float16 units in the last place of ref."""
    spacing = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(ref), 2.0 ** -14))) - 10)
    return np.abs(y - ref) / spacing


def run_xnnpack(model, x):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[XnnpackPartitioner()])
    assert any("executorch_call_delegate" in str(n.target) for n in edge.exported_program().graph.nodes)
    pte = edge.to_executorch().buffer
    program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
    method = program.load_method("forward")
    return method.execute([x])[0]


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((ln.split(":", 1)[1].split() for ln in fh if ln.startswith("flags")), [])
    except OSError:
        flags = []
    return [f for f in ("f16c", "fma", "avx2", "avx512f", "avx512bw", "avx512_fp16") if f in flags]


def main() -> int:
    import importlib.metadata

    print(f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}, CPU flags: "
          f"{' '.join(cpu_flags()) or 'none of f16c/fma/avx2/avx512'}")
    # what the delegate accumulates in, live: 2048 + eight 1s is 2056 in float32, stays 2048 in float16
    probe = torch.nn.Conv1d(9, 1, 1, bias=False).eval().half()
    with torch.no_grad():
        probe.weight.fill_(1.0)
    px = torch.ones(1, 9, 1, dtype=torch.float16)
    px[0, 0, 0] = 2048.0
    sum16 = float(run_xnnpack(probe, px).float().ravel()[0])
    print(f"1x1 float16 conv of [2048, 1 x 8], weights 1: XNNPACK returns {sum16:g} (float32 accumulation: 2056; "
          "float16 accumulation: 2048)")
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 16, 8, 8, generator=g).half()
    model = torch.nn.Conv2d(16, 4, 3, padding=1, bias=False).eval().half()
    with torch.no_grad():
        model.weight.copy_(torch.rand(4, 16, 3, 3, generator=g).half())
        eager = model(x).double().numpy()
    ref = conv2d_ref(x.double().numpy(), model.weight.detach().double().numpy(), 1)
    y = run_xnnpack(model, x)
    out = y.double().numpy()
    e_xnn, e_eager = ulps(out, ref), ulps(eager, ref)
    at = tuple(int(i) for i in np.unravel_index(e_xnn.argmax(), e_xnn.shape))
    print(f"float16 Conv2d(16, 4, 3, padding=1), 144 products per element: XNNPACK output {y.dtype} {tuple(y.shape)}, "
          f"max error {e_xnn.max():.2f} ulps at {at} (y {out[at]:.6g}, float64 reference {ref[at]:.6g}); eager torch: "
          f"max {e_eager.max():.2f} ulps")
    if sum16 == 2056.0:
        print("not shown on this host: XNNPACK accumulates float16 convolutions in float32 here (no AVX512-FP16 kernels)")
        return 0
    return 1 if e_xnn.max() > 2.0 else 0


if __name__ == "__main__":
    sys.exit(main())
