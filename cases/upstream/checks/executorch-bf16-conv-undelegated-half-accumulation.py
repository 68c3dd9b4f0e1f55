"""A bfloat16 convolution in an XNNPACK-lowered program falls to the portable kernel, which accumulates in bfloat16

Measures: a bfloat16 Conv2d lowered with XnnpackPartitioner: whether the delegate took it, and its error in bfloat16
ulps against float64 beside eager torch. Exit 1 when the error exceeds 1 ulp (the portable kernel's bfloat16
accumulation).
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


def ulps(y, ref, bits):
    """|y - ref| in units in the last place of the half type (`bits` of significand after the leading one)."""
    spacing = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(ref), 2.0 ** -14))) - bits)
    return np.abs(y - ref) / spacing


def main() -> int:
    import importlib.metadata

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    print(f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}")
    shown = False
    for dtype, bits in ((torch.bfloat16, 7),):
        g = torch.Generator().manual_seed(0)
        x = torch.rand(1, 16, 8, 8, generator=g).to(dtype)
        model = torch.nn.Conv2d(16, 4, 3, padding=1, bias=False).eval().to(dtype)
        with torch.no_grad():
            model.weight.copy_(torch.rand(4, 16, 3, 3, generator=g).to(dtype))
        ref = conv2d_ref(x.double().numpy(), model.weight.detach().double().numpy(), 1)
        with torch.no_grad():
            eager = model(x).double().numpy()
        edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[XnnpackPartitioner()])
        ops = [n.target.name() for n in edge.exported_program().graph.nodes
               if n.op == "call_function" and hasattr(n.target, "name")]
        delegated = any("executorch_call_delegate" in str(n.target) for n in edge.exported_program().graph.nodes)
        print(f"{dtype}: lowered with XnnpackPartitioner; delegated: {delegated}; runtime kernels: {ops}")
        pte = edge.to_executorch().buffer
        program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
        method = program.load_method("forward")
        y = method.execute([x])[0]
        out = y.double().numpy()
        e_et, e_eager = ulps(out, ref, bits), ulps(eager, ref, bits)
        at = tuple(int(i) for i in np.unravel_index(e_et.argmax(), e_et.shape))
        print(f"{dtype}: 144 products per element; ExecuTorch output {y.dtype} {tuple(y.shape)}: "
              f"max error {e_et.max():.2f} ulps at {at} (y {out[at]:.6g}, float64 reference {ref[at]:.6g}); "
              f"eager torch: max {e_eager.max():.2f} ulps")
        shown |= bool(e_et.max() > 2.0)
    return 1 if shown else 0


if __name__ == "__main__":
    sys.exit(main())
