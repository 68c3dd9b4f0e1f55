"""ExecuTorch's XNNPACK delegate dies with SIGFPE running a ConvTranspose2d whose output has a zero-length dimension

Kind: crash
Ask: A fix: take in google/XNNPACK#11158 (or leave such a convolution to the portable kernels), so that execute returns an error instead of killing the process.

What happens: ConvTranspose2d(1, 1, 2, stride=2, padding=(3, 0)) on a 1x1x3x3 input has output height (3 - 1) * 2 - 2 * 3 + 2 = 0. Eager PyTorch refuses the call ("Output size is too small"); torch.export accepts it and records a (1, 1, 0, 6) output; XnnpackPartitioner delegates the convolution, and method.execute dies by SIGFPE: no exception, no error code. Lowered without a partitioner, the portable kernel refuses it cleanly (error 0x12, "produces an invalid output size").

Expected: an error the caller can handle, as the portable kernel gives; never a signal.

Mechanism: XNNPACK's xnn_reshape_deconvolution2d_nhwc_f32 computes the output size (0) without checking it; reshape_igemm_path then calls xnn_indirection_init_deconv2d, dividing by the zero output width (clamp_oy = (output_size - 1) / output_width). google/XNNPACK#11158 (merged 2026-09-07, "Reject deconvolution reshape with zero output dimensions") makes the reshape return an error; ExecuTorch 1.5.1 vendors an XNNPACK from before it, and its partitioner (ConvolutionConfig) ignores the output shape.
"""
import sys

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch.version import __version__ as executorch_version

print("torch", torch.__version__, "executorch", executorch_version, flush=True)
model = torch.nn.ConvTranspose2d(1, 1, 2, stride=2, padding=(3, 0)).eval()  # output height (3 - 1) * 2 - 2 * 3 + 2 = 0
x = torch.ones(1, 1, 3, 3)
ep = torch.export.export(model, (x,))  # eager PyTorch refuses the call; export records a (1, 1, 0, 6) output
pte = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
program = Runtime.get().load_program(pte)
method = program.load_method("forward")
try:
    y = method.execute([x])[0]  # dies with SIGFPE here where the defect shows
except RuntimeError as exc:
    sys.exit(print("execute raised an error, as expected:", str(exc).splitlines()[0]))  # exit status 0
print("execute returned an output of shape", tuple(y.shape), "(an error was expected; no crash)")
