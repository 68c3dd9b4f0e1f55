"""XnnpackPartitioner delegates a ConvTranspose with output_padding >= stride, which XNNPACK then refuses at execute

Measures: ConvTranspose2d(2, 3, 3, stride (1, 2), padding 1, dilation 3, output_padding (2, 1)), valid in PyTorch
(output_padding < dilation), in eager torch, lowered with no partitioner and with XnnpackPartitioner, against a
float64 reference: whether the conv was delegated, the runtime's error, or the max |error|. Exit 1 when the delegated
program fails to run.
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
