"""XNNPACK lowering fails on a grouped ConvTranspose followed by BatchNorm: FuseBatchNormPass folds it with fuse_conv_bn_weights, broken for groups > 1

Kind: valid-refused
Ask: Please make the XNNPACK FuseBatchNormPass skip, or fuse group by group as the Arm backend does (#22517), a transposed conv with groups > 1 until pytorch/pytorch#180995 is fixed.

What happens: to_edge_transform_and_lower(..., partitioner=[XnnpackPartitioner()]) raises "An error occurred when running the 'FuseBatchNormPass' pass" for ConvTranspose1d/2d(groups > 1) + BatchNorm: caused by "The size of tensor a (3) must match the size of tensor b (6)" for 4 -> 6 groups 2, and, depthwise (4 -> 4 groups 4), by "expected bias to be 1-dimensional with 16 elements" after the helper silently broadcast the weight to (4, 4, 3). groups=1 lowers and is right; without a partitioner (the portable kernels) every case lowers and matches float64 to 3e-7.

Expected: A valid eager model lowers; a pass that cannot fold a pattern leaves it unfused.

Mechanism: backends/xnnpack/_passes/fuse_batch_norm.py (executorch 1.5.1) calls torch.nn.utils.fusion.fuse_conv_bn_weights(..., transpose=True), which scales the weight's axis 1 as if it held C_out; it holds C_out/groups. That is pytorch/pytorch#180995 (open; its fix PR #184076 was closed unmerged; torch 2.14.1 unchanged). can_fuse in the same file does not check groups.
"""
import sys
import warnings
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.version import __version__

warnings.simplefilter("ignore")  # export's deprecation warnings
print("executorch", __version__, "torch", torch.__version__)
failed = False
for groups, c_out in ((1, 6), (2, 6), (4, 4)):
    what = f"ConvTranspose1d(4, {c_out}, 3, groups={groups}) + BatchNorm1d"
    model = torch.nn.Sequential(torch.nn.ConvTranspose1d(4, c_out, 3, groups=groups), torch.nn.BatchNorm1d(c_out))
    try:
        to_edge_transform_and_lower(torch.export.export(model.eval(), (torch.randn(1, 4, 7),)), partitioner=[XnnpackPartitioner()])
        print(f"{what}: lowered")
    except Exception as e:  # noqa: BLE001 - the lowering's error is the defect
        print(f"{what}: {str(e).splitlines()[0][:64]}... {str(e.__cause__ or e).splitlines()[0][:90]}")
        failed |= groups > 1
sys.exit(1 if failed else 0)
