"""Inductor freezing folds a per-channel mul into a ConvTranspose weight along the wrong axis (and builds a C_in-sized bias)

Kind: wrong-value
Ask: Please make binary_folding handle transposed convolutions (output channels on weight dim 1, per group) or skip them.

What happens: With torch._inductor.config.freezing = True, ConvTranspose2d(4, 4, 3) times a per-output-channel constant [1, 2, 3, 4] compiles and returns up to 2.44 off for outputs up to 4.64: exactly conv_transpose(x * s, w), the constant applied to input channels (every dtype, rank, CPU and CUDA). With C_in != C_out the pass builds a C_in-sized bias: ConvTranspose2d(3, 5, 3) + 0.5 fails to compile (a bias of size [3] for 5 channels). freezing=False is right.

Expected: The compiled module computes what eager computes.

Mechanism: torch/_inductor/fx_passes/binary_folding.py (torch 2.13.0): _op_not_broadcasting_with_conv and _create_new_conv_node work along weight.shape[0], C_in for a transposed conv, and never read the transposed flag.

Symptoms:
a per-channel mul/div or batch norm after a ConvTranspose with C_in == C_out (groups < C_in): wrong values.
a scalar add, or a per-channel add with C_out == 1 < C_in, when C_in != C_out: the compile fails.
"""
import torch
import torch._inductor.config

torch._inductor.config.freezing = True  # inductor's freezing passes, as used for inference
print("torch", torch.__version__)

class ScaledTranspose(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.ConvTranspose2d(4, 4, 3)  # weight (C_in, C_out, 3, 3)
        self.register_buffer("s", torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 4, 1, 1))

    def forward(self, x):
        return self.conv(x) * self.s  # one scale per output channel

m, x = ScaledTranspose().eval(), torch.randn(1, 4, 5, 5)
with torch.no_grad():
    eager, compiled = m(x), torch.compile(m)(x)
print(f"max |compiled - eager| = {(compiled - eager).abs().max():.3g} for outputs up to {eager.abs().max():.3g}")
raise SystemExit(1 if (compiled - eager).abs().max() > 1e-4 else 0)
