"""XnnpackPartitioner delegates a transposed conv whose output_padding is not smaller than its stride, and the program then fails at run time

Kind: valid-refused
Ask: Please have XnnpackPartitioner leave a transposed conv with output_padding >= stride to the portable kernels (check it in ConvolutionConfig.check_constraints), or refuse it at lowering with a message that names the limit.

What happens: ConvTranspose1d/2d with output_padding >= stride is valid in PyTorch where the dilation is larger (output_padding < max(stride, dilation)): ConvTranspose2d(2, 3, 3, stride=1, dilation=2, output_padding=1) runs in eager torch. XnnpackPartitioner delegates it, to_executorch succeeds, and execute fails: "method->execute() failed with error 0x1", logged as "Propagating input shapes failed with code: xnn_status_invalid_parameter". Lowered without a partitioner, the portable kernel runs it and matches eager.

Expected: A model the partitioner accepts runs; a limit of the delegate keeps the node on the portable kernels (https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose2d.html allows output_padding < max(stride, dilation)).

Mechanism: backends/xnnpack/operators/op_conv2d.py (executorch 1.5.1) passes output_padding as XNNPACK's adjustment, which reshape_deconvolution2d_nhwc (src/operators/deconvolution-nhwc.c) requires to be smaller than the stride; ConvolutionConfig.check_constraints (partition/config/gemm_configs.py) does not check it. Output padding reached XNNPACK with #18185; before it such convs stayed on the portable kernels.
"""
import warnings
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch.version import __version__
warnings.simplefilter("ignore")  # export's deprecation warnings
print("executorch", __version__, "torch", torch.__version__)
conv = torch.nn.ConvTranspose2d(2, 3, 3, stride=1, dilation=2, output_padding=1).eval()  # valid: 1 < dilation 2
x = torch.randn(1, 2, 4, 4)
failed = False
for name, part in (("portable kernels", None), ("XnnpackPartitioner", [XnnpackPartitioner()])):
    program = Runtime.get().load_program(to_edge_transform_and_lower(torch.export.export(conv, (x,)), partitioner=part).to_executorch().buffer)
    try:
        y = program.load_method("forward").execute([x])[0]
        print(f"{name}: output {tuple(y.shape)}, max |y - eager| {(y - conv(x)).abs().max().item():.2g}")
    except RuntimeError as e:
        print(f"{name}: execute raised {e}")
        failed = part is not None
raise SystemExit(1 if failed else 0)
