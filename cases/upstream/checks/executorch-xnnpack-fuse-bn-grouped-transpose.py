"""ExecuTorch's XNNPACK lowering fails on a grouped ConvTranspose followed by BatchNorm (FuseBatchNormPass)

Measures: ConvTranspose1d + BatchNorm1d with groups 1, 2 and 4 (depthwise), lowered with XnnpackPartitioner and with
no partitioner, run on the ExecuTorch runtime against a float64 reference: the lowering's error, or the output shape
and max |error|. Exit 1 when a grouped model fails to lower.
"""
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def conv_transpose1d_ref(x, w, b, groups):
    """float64 ConvTranspose1d, stride 1, padding 0: each input element scatters its kernel row."""
    n, c, length = x.shape
    cg, og, k = w.shape[0] // groups, w.shape[1], w.shape[2]
    y = np.zeros((n, og * groups, length + k - 1))
    for g in range(groups):
        for i in range(length):
            y[:, g * og:(g + 1) * og, i:i + k] += np.einsum("nc,cok->nok", x[:, g * cg:(g + 1) * cg, i],
                                                            w[g * cg:(g + 1) * cg])
    return y + b.reshape(1, -1, 1)


class ConvTBN(torch.nn.Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.conv = torch.nn.ConvTranspose1d(4, 6 if groups != 4 else 4, 3, groups=groups)
        self.bn = torch.nn.BatchNorm1d(self.conv.out_channels)

    def forward(self, x):
        return self.bn(self.conv(x))


def main() -> int:
    import importlib.metadata

    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    print(f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}")
    torch.manual_seed(0)
    x = torch.randn(1, 4, 7)
    failed = 0
    for groups in (1, 2, 4):
        model = ConvTBN(groups).eval()
        with torch.no_grad():
            model.bn.running_mean.uniform_(-1, 1)
            model.bn.running_var.uniform_(0.5, 2.0)
            model.bn.weight.uniform_(0.5, 1.5)
            model.bn.bias.uniform_(-1, 1)
        bn = model.bn
        conv = conv_transpose1d_ref(x.double().numpy(), model.conv.weight.detach().double().numpy(),
                                    model.conv.bias.detach().double().numpy(), groups)
        scale = (bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)).numpy()
        ref = (conv - bn.running_mean.double().numpy()[None, :, None]) * scale[None, :, None] \
            + bn.bias.detach().double().numpy()[None, :, None]
        for name, partitioner in (("XnnpackPartitioner", [XnnpackPartitioner()]), ("no partitioner", None)):
            what = f"ConvTranspose1d(4, {model.conv.out_channels}, 3, groups={groups}) + BatchNorm1d, {name}"
            try:
                edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=partitioner)
            except Exception as exc:  # noqa: BLE001 - the lowering's refusal is the defect
                cause = exc.__cause__
                print(f"{what}: lowering raised {type(exc).__name__}: {str(exc).splitlines()[0]}"
                      + (f" (caused by {type(cause).__name__}: {str(cause).splitlines()[0]})" if cause else ""))
                failed += 1
                continue
            pte = edge.to_executorch().buffer
            program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
            method = program.load_method("forward")
            y = method.execute([x])[0].double().numpy()
            print(f"{what}: output {y.shape} (reference {ref.shape}), max |error| {np.abs(y - ref).max():.3g}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
