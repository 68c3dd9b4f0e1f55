"""to_edge rounds a Python float scalar of a float64 graph to float32 (x * 0.1 computes with 0.100000001490116)

Kind: wrong-value
Ask: Please create the scalar's tensor in the other operand's dtype (or float64) in ScalarToTensorPass, so that float64 graphs keep the double value.

What happens: A float64 module computing x * 0.1, lowered with to_edge_transform_and_lower (with or without XnnpackPartitioner, which takes no float64 op) and run by the ExecuTorch runtime, is 1.49e-8 relative off eager torch: it multiplies by float32(0.1) = 0.100000001490116. x / 0.3 is 4.0e-8 off, x + 0.1 1.5e-9 absolute. In the lowered graph the scalar is a float32 constant that a _to_dim_order_copy casts to float64. A float64 convolution followed by such a scalar ends up 6.9e5 to 2.0e7 times a float64 rounding bound off.

Expected: Type promotion gives a Python float scalar the tensor's dtype with its full double value (https://pytorch.org/docs/stable/tensor_attributes.html#type-promotion-doc); eager torch matches float64 NumPy exactly.

Mechanism: exir/passes/scalar_to_tensor_pass.py (executorch 1.5.1), ScalarToTensorPass.call_operator: try_coerce makes each float Scalar torch.tensor(value), of the default dtype float32, so the double is rounded before RemoveMixedTypeOperators casts it to float64.
"""
import warnings
import torch
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from executorch.version import __version__

warnings.simplefilter("ignore")  # export's deprecation warnings
print("executorch", __version__, "torch", torch.__version__)


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 0.1


x = torch.arange(1.0, 5.0, dtype=torch.float64)
program = Runtime.get().load_program(to_edge_transform_and_lower(torch.export.export(Scale(), (x,))).to_executorch().buffer)
y, eager = program.load_method("forward").execute([x])[0], Scale()(x)
print(f"eager x * 0.1 = {eager.tolist()}\nlowered       = {y.tolist()} (relative error {((y - eager) / eager).abs().max().item():.3g})")
raise SystemExit(0 if torch.equal(y, eager) else 1)
