"""XNNPACK delegate dies with SIGFPE executing a ConvTranspose2d whose output has a zero-length dimension

Project: pytorch/executorch (https://github.com/pytorch/executorch/issues)
Upstream: none found
Related: none
Checked: 2026-11-28, executorch 1.5.1, torch 2.13.0, searched pytorch/executorch issues for "SIGFPE", "Floating point exception XNNPACK", "zero size output convolution", "empty output transposed convolution"

What happens: ConvTranspose2d(1, 1, 2, stride=2, padding=(3, 0)) on a 1x1x3x3 input has output height
(3 - 1) * 2 - 2 * 3 + 2 = 0. Eager torch raises "Calculated output size per channel: (0 x 6). Output size is too
small"; torch.export accepts it and records the output as (1, 1, 0, 6). Lowered with to_edge_transform_and_lower and
no partitioner, execute refuses it cleanly (error 0x12: "The provided combination of input and kernel parameters
produces an invalid output size"). Lowered with XnnpackPartitioner, the convolution is delegated and method.execute
kills the process with SIGFPE (an integer division by zero): no exception, no error code.

Expected: an error the caller can handle (as the runtime's own kernel gives), at lowering (the partitioner leaving a
zero-size convolution to the runtime's kernels, or preprocess refusing it) or at execute; never a signal. The
script runs the delegated program in a child process and reports how it ended.

Mechanism: not known beyond the signal: the XNNPACK delegate (backends/xnnpack/runtime/XNNExecutor.cpp, then XNNPACK's
deconvolution reshape or its pthreadpool tiling) divides by a zero output extent; ExecuTorch's partitioner
(ConvolutionConfig) does not look at the output shape.

Host: any.
"""
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")

CHILD = r'''
import warnings
warnings.filterwarnings("ignore")
import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime

model = torch.nn.ConvTranspose2d(1, 1, 2, stride=2, padding=(3, 0)).eval()
x = torch.ones(1, 1, 3, 3)
partitioner = [XnnpackPartitioner()] if "xnnpack" in __import__("sys").argv else None
edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=partitioner)
pte = edge.to_executorch().buffer
program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
method = program.load_method("forward")
try:
    y = method.execute([x])[0]
    print("execute returned", tuple(y.shape), flush=True)
except RuntimeError as exc:
    print("execute raised RuntimeError:", exc, flush=True)
'''


def main() -> int:
    import importlib.metadata

    import torch

    print(f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}")
    model = torch.nn.ConvTranspose2d(1, 1, 2, stride=2, padding=(3, 0)).eval()
    try:
        model(torch.ones(1, 1, 3, 3))
        print("eager torch: ran")
    except RuntimeError as exc:
        print(f"eager torch raised RuntimeError: {str(exc).splitlines()[0]}")
    killed = False
    for which in ("portable", "xnnpack"):
        proc = subprocess.run([sys.executable, "-c", CHILD, which], capture_output=True, text=True, timeout=600)
        said = [ln for ln in proc.stdout.splitlines() if ln.startswith("execute")]
        if proc.returncode < 0:
            print(f"{which}: the child process was killed by signal {-proc.returncode} "
                  f"({'SIGFPE' if -proc.returncode == 8 else 'signal'}) during execute")
            killed = True
        else:
            print(f"{which}: exit status {proc.returncode}; {said[0] if said else proc.stderr.strip()[-200:]}")
    return 1 if killed else 0


if __name__ == "__main__":
    sys.exit(main())
