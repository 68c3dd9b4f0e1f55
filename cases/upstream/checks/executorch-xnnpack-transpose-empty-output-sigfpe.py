"""Full check: ExecuTorch runs a ConvTranspose2d with a zero-length output height, portable and XNNPACK

Measures: eager torch's answer; then the exported program lowered without a partitioner (portable kernels) and
with XnnpackPartitioner, each executed in a child process, and how each child ended (an error, an output, or a
signal). Exit 1 when a child is killed by a signal, 0 otherwise.
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
