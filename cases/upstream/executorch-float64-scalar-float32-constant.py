"""to_edge turns a Python float in a float64 graph into a float32 constant: float64 `x * 0.1` loses precision

Project: pytorch/executorch (https://github.com/pytorch/executorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/50834 (the same class in TorchScript: a scalar canonicalized to a tensor of the default dtype)
Checked: 2026-11-28, executorch 1.5.1, torch 2.13.0, searched pytorch/executorch issues and pull requests for "ScalarToTensorPass", "float64 scalar precision", "double scalar float32", "mixed dtype scalar"

What happens: a float64 module whose forward multiplies, adds or divides by a Python float (y = x * 0.1, x + 0.1,
x / 0.3) exports as aten.mul/add/div with a Scalar; lowered with to_edge_transform_and_lower (with or without a
partitioner) and run by the ExecuTorch runtime, the result is off the float64 result by about float32's precision:
x * 0.1 by 1.49e-8 relative (0.1 became 0.100000001490116), x + 0.1 by 1.5e-9 absolute (4.6e-8 relative on the
script's data), x / 0.3 by 4.0e-8 relative, where eager torch matches float64 NumPy exactly. In the lowered graph
the scalar is a constant tensor of dtype float32 that a _to_dim_order_copy casts to float64 before the mul. In
convdiff's corpus a float64 convolution followed by such a scalar epilogue is off by up to 2e7 times a float64
error bound (3.9e-9 absolute on values of order 1).

Expected: eager PyTorch's semantics: a Python float scalar combines with a float64 tensor in float64 (type
promotion: the scalar takes the tensor's dtype, with its full double value). The script's reference is float64 NumPy.

Mechanism: exir/passes/scalar_to_tensor_pass.py, ScalarToTensorPass.call_operator (try_coerce), run by to_edge among
base_pre_op_replace_passes (exir/passes/__init__.py): each float/int/bool Scalar argument becomes torch.tensor(value),
a tensor of the default dtype, float32, so the double is rounded to float32 before RemoveMixedTypeOperators casts it
to the other operand's float64. Creating it as torch.tensor(value, dtype=torch.float64) (or in the other operand's
dtype) would keep the value.

Host: any.
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
