"""A bfloat16 convolution in an XNNPACK-lowered program falls to the portable kernel, which accumulates in bfloat16

Project: pytorch/executorch (https://github.com/pytorch/executorch/issues)
Upstream: none found
Related: none
Checked: 2026-11-28, executorch 1.5.1, torch 2.13.0, searched pytorch/executorch issues for "bfloat16 convolution XNNPACK", "bf16 conv accuracy", "portable conv half precision accumulate"

What happens: a bfloat16 Conv2d(16, 4, 3, padding=1) on positive data (144 products per output element) lowered with
to_edge_transform_and_lower(..., partitioner=[XnnpackPartitioner()]) is not delegated (XNNPACK's partitioner takes
float32 and float16 convolutions), so the program runs it on the runtime's portable convolution kernel, which sums in
bfloat16: up to about 7 bfloat16 units in the last place (ulps) off the float64 result, where eager torch's bfloat16
conv stays within 0.5 ulp. In convdiff's corpus the bfloat16 conv2d and conv_transpose2d cases on the XNNPACK-lowered
program exceed a float32-accumulation error bound by 1.04x to 1.8x, the same numbers as the program lowered without a
partitioner.

Expected: the result of float32 accumulation of the bfloat16 products, rounded once (eager PyTorch's CPU
convolution). The script's reference is a float64 NumPy convolution of the same bfloat16 values.

Mechanism: kernels/portable/cpu/op_convolution.cpp, conv2d_impl: `CTYPE accum` with CTYPE the tensor's scalar type
(BFloat16), each product added with `accum += in_val * w_val`; the transposed path adds into the output in CTYPE.
XNNPACK's partitioner (backends/xnnpack/partition/config/gemm_configs.py ConvolutionConfig) supports FP32 and FP16
precision only, so a bfloat16 model lowered "to XNNPACK" still meets the portable kernel.

Host: any.
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
