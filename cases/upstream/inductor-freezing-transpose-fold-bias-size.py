# inductor freezing folds a scalar add after ConvTranspose2d(C_in != C_out) into a bias of C_in elements: compile error
# (also: any per-channel add after ConvTranspose2d(C_in>1, C_out=1), and a scalar mul when the conv has a bias)
import torch
import torch._inductor.config as cfg

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.ConvTranspose2d(3, 5, 3, bias=False)   # weight (C_in=3, C_out=5, 3, 3)
    def forward(self, x):
        return self.conv(x) + 0.5
m, x = M().eval(), torch.randn(1, 3, 5, 5)
with torch.no_grad():
    for freezing in (False, True):
        torch._dynamo.reset()
        try:
            with cfg.patch(freezing=freezing):
                y = torch.compile(m, backend="inductor", fullgraph=True)(x)
            print(f"freezing={freezing}: max|y - eager| = {(y - m(x)).abs().max().item():.3g}")
        except Exception as e:
            print(f"freezing={freezing}: {type(e).__name__}: {' '.join(str(e).split(chr(10))[:2])[:300]}")
