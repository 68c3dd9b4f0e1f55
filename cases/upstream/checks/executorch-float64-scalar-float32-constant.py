"""to_edge turns a Python float in a float64 graph into a float32 constant: float64 `x * 0.1` loses precision

Measures: float64 modules computing x * 0.1, x + 0.1 and x / 0.3, lowered with and without XnnpackPartitioner and run
on the ExecuTorch runtime, against float64 NumPy (relative error), and the dtype of the scalar's constant in the
lowered graph. Exit 1 when the result differs from float64 by more than 1e-12 relative.
"""
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


class ScalarOp(torch.nn.Module):
    def __init__(self, op: str) -> None:
        super().__init__()
        self.op = op

    def forward(self, x):
        if self.op == "mul":
            return x * 0.1
        if self.op == "add":
            return x + 0.1
        return x / 0.3


def main() -> int:
    import importlib.metadata

    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime

    print(f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}")
    x_np = np.random.default_rng(0).standard_normal((1, 2, 5))
    x = torch.from_numpy(x_np)  # float64
    worst = 0.0
    for op, ref in (("mul", x_np * 0.1), ("add", x_np + 0.1), ("div", x_np / 0.3)):
        model = ScalarOp(op).eval()
        edge = to_edge_transform_and_lower(torch.export.export(model, (x,)))
        ops = [n.target.name() for n in edge.exported_program().graph.nodes if n.op == "call_function"]
        pte = edge.to_executorch().buffer
        program = Runtime.get().load_program(pte)  # keep pte and program alive while the method runs
        method = program.load_method("forward")
        y = method.execute([x])[0]
        rel = np.abs(y.numpy() - ref) / np.abs(ref)
        eager = np.abs(model(x).numpy() - ref) / np.abs(ref)
        at = tuple(int(i) for i in np.unravel_index(rel.argmax(), rel.shape))
        print(f"float64 x {op} scalar: ExecuTorch output {y.dtype}, max relative error {rel.max():.3g} at {at} "
              f"(y {float(y.numpy()[at])!r}, float64 reference {float(ref[at])!r}); eager torch {eager.max():.3g}; "
              f"lowered ops {ops}")
        worst = max(worst, float(rel.max()))
    return 1 if worst > 1e-12 else 0


if __name__ == "__main__":
    sys.exit(main())
