# inductor freezing folds a per-channel constant after ConvTranspose2d into the weight along the wrong axis
import torch
import torch._inductor.config as cfg

torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.ConvTranspose2d(4, 4, 3, bias=False)   # weight (C_in, C_out, kH, kW)
        self.register_buffer("s", torch.tensor([1.0, 2.0, 3.0, 4.0]))
    def forward(self, x):
        return self.conv(x) * self.s.view(1, -1, 1, 1)
m, x = M().eval(), torch.randn(1, 4, 5, 5)
with torch.no_grad():
    ref = m(x)
    for freezing in (False, True):
        torch._dynamo.reset()
        with cfg.patch(freezing=freezing):
            y = torch.compile(m, backend="inductor", fullgraph=True)(x)
        print(f"freezing={freezing}: max|y - eager| = {(y - ref).abs().max().item():.3g}")
