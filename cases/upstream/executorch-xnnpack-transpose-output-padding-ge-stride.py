"""XnnpackPartitioner delegates a ConvTranspose with output_padding >= stride, which XNNPACK then refuses at execute

Project: pytorch/executorch (https://github.com/pytorch/executorch/issues)
Upstream: none found
Related: https://github.com/pytorch/executorch/pull/18185 (wired output_padding into XNNPACK's transposed convolution); https://github.com/pytorch/executorch/pull/8462 (earlier: did not offload transposed convs with output padding)
Checked: 2026-11-28, executorch 1.5.1, torch 2.13.0, searched pytorch/executorch issues and pull requests for "output_padding", "xnn_status_invalid_parameter", "Propagating input shapes failed", "transposed convolution XNNPACK"

What happens: nn.ConvTranspose2d(2, 3, 3, stride=(1, 2), padding=1, dilation=3, output_padding=(2, 1)) is valid in
PyTorch (output_padding must be smaller than stride or dilation: 2 < 3), and eager torch, and the same program lowered
without a partitioner, compute it. Lowered with to_edge_transform_and_lower(..., partitioner=[XnnpackPartitioner()]),
the convolution is delegated to XNNPACK, and method.execute fails: "method->execute() failed with error 0x1", the
runtime's log saying "[XNNExecutor.cpp] Internal Error: Propagating input shapes failed with code:
xnn_status_invalid_parameter". The same holds for ConvTranspose1d and for float16. Every transposed convolution whose
output_padding is not smaller than its stride in some dimension (valid where the dilation is larger) fails this way.

Expected: the partitioner leaves a convolution XNNPACK cannot run to the runtime's own kernels (as it does for 3-D
convolutions), so the program runs and matches PyTorch's ConvTranspose2d. The script's reference is a float64 NumPy
transposed convolution (scatter of each input element times the kernel, then the crop by padding and output_padding).

Mechanism: backends/xnnpack/operators/op_conv2d.py passes output_padding to xnn_define_deconvolution_2d as the
adjustment (adjustment_height/adjustment_width); XNNPACK's reshape_deconvolution2d_nhwc (src/operators/
deconvolution-nhwc.c) refuses an adjustment not smaller than the stride ("height adjustment must be smaller than height
stride") with xnn_status_invalid_parameter. backends/xnnpack/partition/config/gemm_configs.py
ConvolutionConfig.check_constraints checks the rank and the quantization scheme, but not output_padding against the
stride, so the node is delegated.

Host: any.
"""
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def reference(x, w, b, stride, padding, dilation, output_padding):
    """float64 ConvTranspose2d (groups 1): scatter-add, then crop `padding` from both ends, `output_padding` kept."""
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    full = ((h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + output_padding[0],
            (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + output_padding[1])
    y = np.zeros((n, o, *full))
    for i in range(h):
        for j in range(wd):
            for p in range(kh):
                for q in range(kw):
                    y[:, :, i * stride[0] + p * dilation[0], j * stride[1] + q * dilation[1]] += x[:, :, i, j] @ w[:, :, p, q]
    y = y[:, :, padding:full[0] - padding, padding:full[1] - padding]
    return y + b.reshape(1, -1, 1, 1)


def main() -> int:
    import importlib.metadata

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    print(f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}")
    torch.manual_seed(0)
    stride, padding, dilation, output_padding = (1, 2), 1, (3, 3), (2, 1)
    model = torch.nn.ConvTranspose2d(2, 3, 3, stride=stride, padding=padding, dilation=dilation,
                                     output_padding=output_padding).eval()
    x = torch.randint(-3, 4, (1, 2, 4, 5)).float()
    ref = reference(x.double().numpy(), model.weight.detach().double().numpy(), model.bias.detach().double().numpy(),
                    stride, padding, dilation, output_padding)
    eager = model(x).detach().double().numpy()
    print(f"ConvTranspose2d(2, 3, 3, stride={stride}, padding={padding}, dilation={dilation}, output_padding="
          f"{output_padding}): eager torch {eager.shape}, max |eager - float64 reference| = {np.abs(eager - ref).max():.3g}")
    refused = 0
    for name, partitioner in (("no partitioner", None), ("XnnpackPartitioner", [XnnpackPartitioner()])):
        edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=partitioner)
        delegated = any("executorch_call_delegate" in str(n.target) for n in edge.exported_program().graph.nodes)
        pte = edge.to_executorch().buffer
        program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
        method = program.load_method("forward")
        try:
            y = method.execute([x])[0].double().numpy()
        except RuntimeError as exc:
            print(f"{name} (convolution delegated: {delegated}): execute raised RuntimeError: {exc}")
            refused += 1
            continue
        err = np.abs(y - ref)
        print(f"{name} (convolution delegated: {delegated}): output {y.shape} (reference {ref.shape}), max |error| "
              f"{err.max():.3g} at {tuple(int(i) for i in np.unravel_index(err.argmax(), err.shape))}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
